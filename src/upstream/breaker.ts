/**
 * A circuit breaker (docs/RESILIENCE.md): one per platform key and upstream in
 * an isolate (upstream/key-health.ts), and one for the upstream as a whole,
 * which opens only on the platform's own failure (upstream/platform-verdict.ts).
 * Closed: calls go through, outcomes are counted. It opens after
 * `consecutiveFailures` failures in a row, or when at least `minCalls` calls
 * in the last `windowMs` failed at `failureRatio` or more. Open: calls are
 * refused at once until `cooldownMs` has passed. Half-open: exactly one probe
 * goes through; its success closes the breaker, its failure opens it again.
 * Time is always passed in, so the state machine is tested without waiting.
 *
 * The window is counted in two halves (half-windows.ts), so an outcome counts
 * for between half a window and a whole one, and a breaker is a dozen numbers
 * however busy its key (docs/RESILIENCE.md, "What tenants share").
 */
import { HalfWindowCounts } from './half-windows';

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

export class CircuitBreaker extends HalfWindowCounts {
  private current: BreakerState = 'closed';
  private inARow = 0;
  /** Open: when it opened. Half-open: when the probe out now went through, or -1. */
  private since = 0;
  /** Its counts (HalfWindowCounts): calls, and failures among them, over the window. */
  constructor(readonly options: BreakerOptions) {
    super();
  }

  protected windowMs(): number {
    return this.options.windowMs;
  }

  /** The state at `now`: an open breaker whose cool-down is over reads as half-open. */
  state(now: number): BreakerState {
    if (this.current === 'open' && now - this.since >= this.options.cooldownMs) {
      return 'half-open';
    }
    return this.current;
  }

  permit(now: number): Permit {
    const state = this.state(now);
    if (state === 'closed') return { allowed: true, probe: false };
    if (state === 'open') {
      return { allowed: false, retryAfterMs: this.since + this.options.cooldownMs - now };
    }
    // Half-open: one probe at a time; a lost probe frees the slot after its timeout.
    if (this.current === 'open') {
      this.current = 'half-open';
      this.since = -1;
    }
    if (this.since >= 0 && now - this.since < this.options.probeTimeoutMs) {
      return { allowed: false, retryAfterMs: Math.max(1000, this.options.cooldownMs) };
    }
    this.since = now;
    return { allowed: true, probe: true };
  }

  /** Gives the probe's place back when the call it was for was refused by something else. */
  releaseProbe(): void {
    if (this.current === 'half-open') this.since = -1;
  }

  success(now: number): void {
    this.tally(now, 1, 0);
    this.inARow = 0;
    // Only the probe closes it: a call that began before the breaker opened proves little.
    if (this.current === 'half-open') this.close();
  }

  /** Counts a failure; true when it opened the breaker. */
  failure(now: number): boolean {
    this.tally(now, 1, 1);
    this.inARow++;
    if (this.current === 'open') return false;
    const tripped =
      this.current === 'half-open' ||
      this.inARow >= this.options.consecutiveFailures ||
      this.ratioTripped(now);
    if (tripped) this.trip(now);
    return tripped;
  }

  /** Opens it now, whatever was counted (the upstream-wide breaker, on several keys' word). */
  trip(now: number): void {
    this.current = 'open';
    this.since = now;
  }

  /** Closes it now (the upstream-wide breaker, once the platform answered any key). */
  close(): void {
    this.current = 'closed';
    this.clearCounts();
  }

  private ratioTripped(now: number): boolean {
    const calls = this.callsIn(now);
    const failures = this.markedIn(now);
    return calls >= this.options.minCalls && failures / calls >= this.options.failureRatio;
  }
}
