/**
 * Counting over a sliding window kept in two halves, the current one and the one
 * before: what was counted counts for between half a window and a whole one, in a
 * handful of numbers however busy the counter (docs/RESILIENCE.md, "What tenants
 * share"). The circuit breakers (breaker.ts), a key's retry budget (key-health.ts) and
 * the upstream's several-keys rule (several-keys.ts) count this way. Time is passed in.
 */

/** Which half-window `now` falls in. */
export function halfOf(now: number, windowMs: number): number {
  return Math.floor(now / Math.max(1, windowMs / 2));
}

/**
 * Calls over the window, and with them one count more: a breaker's failures, a retry
 * budget's retries. The counters extend it rather than hold one, so that a platform
 * key's state stays a few objects (key-health.ts, MAX_KEYS).
 */
export abstract class HalfWindowCounts {
  private half = 0;
  private calls = 0;
  private marked = 0;
  private prevCalls = 0;
  private prevMarked = 0;

  /** The window's length (ms): the counter's own option, not kept twice. */
  protected abstract windowMs(): number;

  /** Adds `calls` calls and `marked` to the other count, at `now`. */
  protected tally(now: number, calls: number, marked: number): void {
    this.roll(now);
    this.calls += calls;
    this.marked += marked;
  }

  /** The calls counted over the window at `now`. */
  protected callsIn(now: number): number {
    this.roll(now);
    return this.calls + this.prevCalls;
  }

  /** The other count over the window at `now`. */
  protected markedIn(now: number): number {
    this.roll(now);
    return this.marked + this.prevMarked;
  }

  /** Forgets all counted so far. */
  protected clearCounts(): void {
    this.calls = this.marked = this.prevCalls = this.prevMarked = 0;
  }

  /** A new half began: the current counts become the previous half's, or none if not adjacent. */
  private roll(now: number): void {
    const half = halfOf(now, this.windowMs());
    if (half === this.half) return;
    const next = half === this.half + 1;
    this.prevCalls = next ? this.calls : 0;
    this.prevMarked = next ? this.marked : 0;
    this.calls = this.marked = 0;
    this.half = half;
  }
}
