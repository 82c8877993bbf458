/**
 * "Several keys" (docs/RESILIENCE.md, "One key's trouble stays its own"): the
 * upstream as a whole is only judged failing, or paused, on the word of
 * several platform keys (platform-verdict.ts). This counts distinct keys that
 * did something, and calls, within a window.
 *
 * Counting is in the same two half-windows as the breakers (half-windows.ts): a
 * key counts from when it did it for between half a window and a whole one.
 * Each key remembers only the half in which it was last counted (one number
 * in its KeyHealth), so counting costs nothing per key beyond that, and
 * nothing is ever iterated.
 */
import { HalfWindowCounts, halfOf } from './half-windows';

/** Fewest keys that can speak for the upstream, however few keys call it. */
export const MIN_SEVERAL_KEYS = 3;

/** The half a key never counted remembers. */
export const NEVER_COUNTED = -2;

/** Distinct keys that did one thing (failed, stopped, were paused) within the window. */
export class DistinctKeys {
  private half = NEVER_COUNTED;
  /** Added to every half: forget() moves it on, so no earlier mark still counts. */
  private shift = 0;
  /** Keys counted in the current half; those of them not counted in the half before. */
  private current = 0;
  private fresh = 0;
  private previous = 0;

  constructor(private readonly windowMs: number) {}

  /** Starts counting afresh (the platform answered a call, or a hold began). */
  forget(): void {
    this.shift += 2;
  }

  /**
   * Counts a key at `now`, given the half in which it was last counted
   * (NEVER_COUNTED at first); returns the half to remember for it.
   */
  note(lastHalf: number, now: number): number {
    const half = this.roll(now);
    if (lastHalf === half) return half;
    this.current++;
    if (lastHalf !== half - 1) this.fresh++;
    return half;
  }

  /** Distinct keys counted in this half and the one before. */
  count(now: number): number {
    this.roll(now);
    return this.previous + this.fresh;
  }

  /**
   * The current half; when it changed, the counts move on first: the current ones become
   * the previous half's, or none if not adjacent.
   */
  private roll(now: number): number {
    const half = halfOf(now, this.windowMs) + this.shift;
    if (half !== this.half) {
      this.previous = half === this.half + 1 ? this.current : 0;
      this.current = this.fresh = 0;
      this.half = half;
    }
    return half;
  }
}

/** Calls (of any key) within the window. */
export class RecentCalls extends HalfWindowCounts {
  constructor(private readonly window: number) {
    super();
  }

  protected windowMs(): number {
    return this.window;
  }

  add(now: number): void {
    this.tally(now, 1, 0);
  }

  count(now: number): number {
    return this.callsIn(now);
  }

  /** Starts counting afresh (the platform answered a call). */
  forget(): void {
    this.clearCounts();
  }
}
