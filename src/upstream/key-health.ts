/**
 * What one isolate knows of one platform key's calls to one upstream
 * (docs/RESILIENCE.md, "One key's trouble stays its own"): the key's own
 * circuit breaker and retry budget (KeyRetryBudget), a pause the platform
 * asked of it, how its latest call ended, and the half-windows in which it was
 * last counted as failing, stopped and paused (platform-verdict.ts). Kept by the key's fingerprint, never
 * the key, for at most MAX_KEYS keys; a few hundred bytes each (measured by
 * `npm run chaos`).
 */
import { type BreakerOptions, CircuitBreaker } from './breaker';
import { HalfWindowCounts } from './half-windows';
import { type RetryBudgetOptions, retryFits } from './retry-budget';
import { NEVER_COUNTED } from './several-keys';

/** What a pause answers: a 429's (42902) or a 503's (50302). */
export type PauseKind = 'rate' | 'backoff';

/**
 * A key's circuit breaker, with the rest of its state on the same object
 * (one object a key, not three: see MAX_KEYS).
 */
export class KeyHealth extends CircuitBreaker {
  readonly budget: KeyRetryBudget;
  /** Until when the platform asked this key to pause (ms since the epoch; 0: never). */
  pauseUntil = 0;
  pauseKind: PauseKind = 'rate';
  /** Whether its latest call failed: only then can the upstream-wide state hold it. */
  lastFailed = false;
  /** Whether the platform ever answered one of its calls (it was working). */
  answeredOnce = false;
  /** The half-windows in which this key was last counted (platform-verdict.ts). */
  failingIn = NEVER_COUNTED;
  stoppedIn = NEVER_COUNTED;
  pausedIn = NEVER_COUNTED;

  constructor(breaker: BreakerOptions, retry: RetryBudgetOptions) {
    super(breaker);
    this.budget = new KeyRetryBudget(retry);
  }

  /** Holds this key's calls until `until`, unless a longer pause already does. */
  pause(kind: PauseKind, until: number): void {
    if (until <= this.pauseUntil) return;
    this.pauseUntil = until;
    this.pauseKind = kind;
  }
}

/**
 * A key's own retry budget: the upstream's rule (retry-budget.ts) over the
 * key's own calls, counted in two halves of the window like the breaker
 * (half-windows.ts), so it is a handful of numbers. The upstream's budget,
 * counted exactly, stays the ceiling above it.
 */
export class KeyRetryBudget extends HalfWindowCounts {
  /** Its counts (HalfWindowCounts): first attempts, and retries, over the window. */
  constructor(readonly options: RetryBudgetOptions) {
    super();
  }

  protected windowMs(): number {
    return this.options.windowMs;
  }

  /** A first attempt: it earns retry room. */
  noteCall(now: number): void {
    this.tally(now, 1, 0);
  }

  hasRoom(now: number): boolean {
    return retryFits(this.callsIn(now), this.markedIn(now), this.options);
  }

  spend(now: number): void {
    this.tally(now, 0, 1);
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
