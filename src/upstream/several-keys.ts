/**
 * "Several keys" (docs/RESILIENCE.md, "One key's trouble stays its own"): the
 * upstream as a whole is only judged failing, or paused, on the word of
 * several platform keys. This counts distinct keys that did something within
 * a window, and says how many are enough.
 *
 * Counting is in the same two half-windows as the breakers (breaker.ts): a
 * key counts from when it did it for between half a window and a whole one.
 * Each key remembers only the half in which it was last counted (one number
 * in its KeyHealth), so counting costs nothing per key beyond that, and
 * nothing is ever iterated.
 */
import { halfOf } from './breaker';

/** Fewest failing keys that can speak for the upstream, however few keys call it. */
export const MIN_SEVERAL_KEYS = 3;

/**
 * Keys that must agree, of the `callers` that called within the window: at
 * least MIN_SEVERAL_KEYS, and at least half of the callers. One key can never
 * be enough; with one or two keys calling at all, nothing is.
 */
export function severalOf(callers: number): number {
  return Math.max(MIN_SEVERAL_KEYS, Math.ceil(callers / 2));
}

/** The half a key never counted remembers. */
export const NEVER_COUNTED = -2;

/** Distinct keys that did one thing (called, failed, were paused) within the window. */
export class DistinctKeys {
  private half = NEVER_COUNTED;
  /** Keys counted in the current half; those of them not counted in the half before. */
  private current = 0;
  private fresh = 0;
  private previous = 0;
  /** Added to every half: forget() moves it on, so no earlier mark still counts. */
  private shift = 0;

  constructor(private readonly windowMs: number) {}

  /** Starts counting afresh (once the upstream-wide breaker closes or a hold begins). */
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
