/**
 * Pauses the platform asked for, in one isolate (docs/RESILIENCE.md): a 429
 * with Retry-After holds the calls made with that platform key, a 503 with
 * Retry-After holds every call to that upstream, until the time it named.
 * Held calls are answered at once without calling the platform.
 */

/** Keys remembered at most; expired holds go first, then the oldest. */
const MAX_KEYS = 10_000;

export type HoldScope = 'key' | 'all';

export interface Hold {
  scope: HoldScope;
  /** When the pause ends, ms since the epoch. */
  until: number;
}

export class Holds {
  private allUntil = 0;
  private readonly byKey = new Map<string, number>();

  /** `keyId` is the platform key's fingerprint, never the key. */
  holdKey(keyId: string, until: number, now: number): void {
    if ((this.byKey.get(keyId) ?? 0) >= until) return;
    this.byKey.delete(keyId);
    this.byKey.set(keyId, until);
    if (this.byKey.size > MAX_KEYS) this.prune(now);
  }

  holdAll(until: number): void {
    this.allUntil = Math.max(this.allUntil, until);
  }

  /** The hold that applies to a call with this key at `now`, the longer one if both do. */
  heldAt(keyId: string, now: number): Hold | null {
    const keyUntil = this.byKey.get(keyId) ?? 0;
    if (keyUntil > now && keyUntil > this.allUntil) return { scope: 'key', until: keyUntil };
    if (this.allUntil > now) return { scope: 'all', until: this.allUntil };
    if (keyUntil !== 0 && keyUntil <= now) this.byKey.delete(keyId);
    return null;
  }

  private prune(now: number): void {
    for (const [key, until] of this.byKey) if (until <= now) this.byKey.delete(key);
    for (const key of this.byKey.keys()) {
      if (this.byKey.size <= MAX_KEYS) break;
      this.byKey.delete(key);
    }
  }
}
