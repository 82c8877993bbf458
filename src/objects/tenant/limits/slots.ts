/**
 * Where a meter counts its units: in slots. A fixed rate window, a UTC day
 * and a UTC month are one slot each. A sliding window of W is cut into
 * SLIDING_SLOTS slots of W / SLIDING_SLOTS, and a check at time t counts the
 * slot holding t and the SLIDING_SLOTS slots before it: a span that always
 * covers [t - W, t], so no window-length span ever holds more than the limit.
 * The price is that a slot leaves the count up to one slot late (docs/LIMITS.md,
 * "Counting").
 */
import type { Meter } from '../../../metering/policy';

/** Slots per sliding window. */
export const SLIDING_SLOTS = 20;

export interface Slot {
  start: number;
  end: number;
}

/** The slot of `meter` that holds time `t` (ms since the epoch). */
export function slotAt(meter: Pick<Meter, 'counting' | 'window_s'>, t: number): Slot {
  switch (meter.counting) {
    case 'sliding':
      return aligned(t, (meter.window_s * 1000) / SLIDING_SLOTS);
    case 'fixed':
      return aligned(t, meter.window_s * 1000);
    case 'day': {
      const d = new Date(t);
      const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
      return { start, end: start + 86_400_000 };
    }
    case 'month': {
      const d = new Date(t);
      return {
        start: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1),
        end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1),
      };
    }
  }
}

/** The earliest slot start a check in the slot starting at `slotStart` counts. */
export function countedFrom(
  meter: Pick<Meter, 'counting' | 'window_s'>,
  slotStart: number,
): number {
  return meter.counting === 'sliding' ? slotStart - meter.window_s * 1000 : slotStart;
}

/** How long a slot's units stay in any count, from the slot's start: rows older than this go. */
export function keptUntil(meter: Pick<Meter, 'counting' | 'window_s'>, slot: Slot): number {
  return meter.counting === 'sliding' ? slot.end + meter.window_s * 1000 : slot.end;
}

/** The window length to report for `w` at time `t`: a calendar month has its own length. */
export function windowSeconds(meter: Pick<Meter, 'counting' | 'window_s'>, t: number): number {
  if (meter.counting !== 'month') return meter.window_s;
  const { start, end } = slotAt(meter, t);
  return (end - start) / 1000;
}

function aligned(t: number, length: number): Slot {
  const start = Math.floor(t / length) * length;
  return { start, end: start + length };
}
