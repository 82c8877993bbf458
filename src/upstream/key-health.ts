/**
 * What one isolate knows of one platform key's calls to one upstream
 * (docs/RESILIENCE.md, "One key's trouble stays its own"): the key's own
 * circuit breaker and retry budget, a pause the platform asked of it, and the
 * half-windows in which it was last counted as calling, failing and paused
 * (several-keys.ts). Kept by the key's fingerprint, never the key, for at
 * most MAX_KEYS keys; a few hundred bytes each (measured by `npm run chaos`).
 */
import { type BreakerOptions, CircuitBreaker } from './breaker';
import { RetryBudget, type RetryBudgetOptions } from './retry-budget';
import { NEVER_COUNTED } from './several-keys';

/** What a pause answers: a 429's (42902) or a 503's (50302). */
export type PauseKind = 'rate' | 'backoff';

/**
 * A key's circuit breaker, with the rest of its state on the same object
 * (one object a key, not three: see MAX_KEYS).
 */
export class KeyHealth extends CircuitBreaker {
  readonly budget: RetryBudget;
  /** Until when the platform asked this key to pause (ms since the epoch; 0: never). */
  pauseUntil = 0;
  pauseKind: PauseKind = 'rate';
  /** The half-windows in which this key was last counted (several-keys.ts). */
  calledIn = NEVER_COUNTED;
  failingIn = NEVER_COUNTED;
  pausedIn = NEVER_COUNTED;

  constructor(breaker: BreakerOptions, retry: RetryBudgetOptions) {
    super(breaker);
    this.budget = new RetryBudget(retry);
  }

  /** Holds this key's calls until `until`, unless a longer pause already does. */
  pause(kind: PauseKind, until: number): void {
    if (until <= this.pauseUntil) return;
    this.pauseUntil = until;
    this.pauseKind = kind;
  }
}

/** Keys one isolate remembers per upstream; the least recently used is forgotten first. */
export const MAX_KEYS = 10_000;

/** The keys of one upstream, by fingerprint, least recently used first. */
export class KeyTable {
  private readonly keys = new Map<string, KeyHealth>();

  constructor(
    private readonly make: () => KeyHealth,
    private readonly max = MAX_KEYS,
  ) {}

  /** The key's state (new on first use), now the most recently used. */
  use(keyId: string): KeyHealth {
    let key = this.keys.get(keyId);
    if (key) this.keys.delete(keyId);
    else {
      key = this.make();
      if (this.keys.size >= this.max) {
        const oldest = this.keys.keys().next().value;
        if (oldest !== undefined) this.keys.delete(oldest);
      }
    }
    this.keys.set(keyId, key);
    return key;
  }

  get size(): number {
    return this.keys.size;
  }

  values(): IterableIterator<KeyHealth> {
    return this.keys.values();
  }
}
