/**
 * How many retries may be made (docs/RESILIENCE.md): at most `ratio` of the
 * calls of the last `windowMs`, or `minPerSecond` over the window when that
 * is more (quiet times). When the platform fails, retries then add at most a
 * tenth to a busy isolate's load, never multiply it. Each platform key has
 * one, under one more for the whole upstream (upstream/upstream-health.ts).
 * Counted in two half-windows like the breaker, so it is a few numbers. Time
 * is passed in.
 */
import { halfOf } from './breaker';

export interface RetryBudgetOptions {
  ratio: number;
  minPerSecond: number;
  windowMs: number;
}

export class RetryBudget {
  private half = 0;
  private calls = 0;
  private retries = 0;
  private prevCalls = 0;
  private prevRetries = 0;

  constructor(readonly options: RetryBudgetOptions) {}

  /** A first attempt: it earns retry room. */
  noteCall(now: number): void {
    this.roll(now);
    this.calls++;
  }

  /** Whether one more retry fits now. */
  hasRoom(now: number): boolean {
    this.roll(now);
    const calls = this.calls + this.prevCalls;
    const retries = this.retries + this.prevRetries;
    const reserve = (this.options.minPerSecond * this.options.windowMs) / 1000;
    return retries + 1 <= Math.max(calls * this.options.ratio, reserve);
  }

  /** Takes one retry (after hasRoom said yes). */
  spend(now: number): void {
    this.roll(now);
    this.retries++;
  }

  /** Takes one retry from the budget if there is room. */
  tryRetry(now: number): boolean {
    if (!this.hasRoom(now)) return false;
    this.spend(now);
    return true;
  }

  private roll(now: number): void {
    const half = halfOf(now, this.options.windowMs);
    if (half === this.half) return;
    const next = half === this.half + 1;
    this.prevCalls = next ? this.calls : 0;
    this.prevRetries = next ? this.retries : 0;
    this.calls = this.retries = 0;
    this.half = half;
  }
}
