import { describe, expect, it } from 'vitest';
import { countedFrom, keptUntil, SLIDING_SLOTS, slotAt, windowSeconds } from './slots';

const at = (iso: string) => Date.parse(iso);

describe('slots', () => {
  it('cut a sliding window into SLIDING_SLOTS slots aligned to the epoch', () => {
    const meter = { counting: 'sliding' as const, window_s: 10 };
    const length = 10_000 / SLIDING_SLOTS;
    const slot = slotAt(meter, 1_000_000_123);
    expect(slot.end - slot.start).toBe(length);
    expect(slot.start % length).toBe(0);
    expect(slot.start).toBeLessThanOrEqual(1_000_000_123);
    // A check counts the window before the slot too: one whole window plus the slot.
    expect(countedFrom(meter, slot.start)).toBe(slot.start - 10_000);
    expect(keptUntil(meter, slot)).toBe(slot.end + 10_000);
  });

  it('make a fixed window one slot', () => {
    const meter = { counting: 'fixed' as const, window_s: 60 };
    expect(slotAt(meter, at('2026-11-21T10:00:59.999Z'))).toEqual({
      start: at('2026-11-21T10:00:00Z'),
      end: at('2026-11-21T10:01:00Z'),
    });
    expect(countedFrom(meter, 5)).toBe(5);
  });

  it('follow the UTC calendar for days and months', () => {
    expect(slotAt({ counting: 'day', window_s: 86_400 }, at('2026-02-14T23:59:59Z'))).toEqual({
      start: at('2026-02-14T00:00:00Z'),
      end: at('2026-02-15T00:00:00Z'),
    });
    const month = { counting: 'month' as const, window_s: 30 * 86_400 };
    expect(slotAt(month, at('2026-12-31T23:00:00Z'))).toEqual({
      start: at('2026-12-01T00:00:00Z'),
      end: at('2027-01-01T00:00:00Z'),
    });
    expect(windowSeconds(month, at('2026-02-10T00:00:00Z'))).toBe(28 * 86_400);
  });
});
