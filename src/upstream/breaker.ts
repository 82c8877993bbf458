/**
 * A circuit breaker for one upstream in one isolate (docs/RESILIENCE.md).
 * Closed: calls go through, outcomes are counted. It opens after
 * `consecutiveFailures` failures in a row, or when at least `minCalls` calls
 * in the last `windowMs` failed at `failureRatio` or more. Open: calls are
 * refused at once until `cooldownMs` has passed. Half-open: exactly one probe
 * goes through; its success closes the breaker, its failure opens it again.
 * Time is always passed in, so the state machine is tested without waiting.
 */

export interface BreakerOptions {
  consecutiveFailures: number;
  /** 0..1; above 1 never trips on the ratio. */
  failureRatio: number;
  windowMs: number;
  minCalls: number;
  cooldownMs: number;
  /** A probe that never reports back frees the half-open slot after this long. */
  probeTimeoutMs: number;
}

export type BreakerState = 'closed' | 'open' | 'half-open';

/** What a caller may do now: call (perhaps as the probe), or answer at once. */
export type Permit = { allowed: true; probe: boolean } | { allowed: false; retryAfterMs: number };

/** Outcomes are counted per second of the window. */
const BUCKET_MS = 1000;

export class CircuitBreaker {
  private current: BreakerState = 'closed';
  private inARow = 0;
  private openedAt = 0;
  private probeSince: number | null = null;
  /** Calls and failures per bucket start, oldest first. */
  private buckets: { at: number; calls: number; failures: number }[] = [];

  constructor(readonly options: BreakerOptions) {}

  /** The state at `now`: an open breaker whose cool-down is over reads as half-open. */
  state(now: number): BreakerState {
    if (this.current === 'open' && now - this.openedAt >= this.options.cooldownMs) {
      return 'half-open';
    }
    return this.current;
  }

  permit(now: number): Permit {
    const state = this.state(now);
    if (state === 'closed') return { allowed: true, probe: false };
    if (state === 'open') {
      return { allowed: false, retryAfterMs: this.openedAt + this.options.cooldownMs - now };
    }
    // Half-open: one probe at a time; a lost probe frees the slot after its timeout.
    this.current = 'half-open';
    if (this.probeSince !== null && now - this.probeSince < this.options.probeTimeoutMs) {
      return { allowed: false, retryAfterMs: Math.max(1000, this.options.cooldownMs) };
    }
    this.probeSince = now;
    return { allowed: true, probe: true };
  }

  success(now: number): void {
    this.count(now, false);
    this.inARow = 0;
    // Only the probe closes it: a call that began before the breaker opened proves little.
    if (this.current === 'half-open') this.close();
  }

  failure(now: number): void {
    this.count(now, true);
    this.inARow++;
    if (this.current === 'open') return;
    const tripped =
      this.current === 'half-open' ||
      this.inARow >= this.options.consecutiveFailures ||
      this.ratioTripped(now);
    if (tripped) this.open(now);
  }

  private open(now: number): void {
    this.current = 'open';
    this.openedAt = now;
    this.probeSince = null;
  }

  private close(): void {
    this.current = 'closed';
    this.probeSince = null;
    this.buckets = [];
  }

  private count(now: number, failed: boolean): void {
    const at = now - (now % BUCKET_MS);
    let last = this.buckets.at(-1);
    if (!last || last.at !== at) {
      last = { at, calls: 0, failures: 0 };
      this.buckets.push(last);
    }
    last.calls++;
    if (failed) last.failures++;
    const since = now - this.options.windowMs;
    while (this.buckets.length > 0 && (this.buckets[0]?.at ?? now) + BUCKET_MS <= since) {
      this.buckets.shift();
    }
  }

  private ratioTripped(now: number): boolean {
    const since = now - this.options.windowMs;
    let calls = 0;
    let failures = 0;
    for (const b of this.buckets) {
      if (b.at + BUCKET_MS <= since) continue;
      calls += b.calls;
      failures += b.failures;
    }
    return calls >= this.options.minCalls && failures / calls >= this.options.failureRatio;
  }
}
