import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Meter } from '../../../metering/policy';
import { Ledger, type LedgerStorage, type SlotRow } from './ledger';
import { slotAt } from './slots';

function memoryStorage(): LedgerStorage & { rows: Map<string, SlotRow> } {
  const rows = new Map<string, SlotRow>();
  return {
    rows,
    load: (meter, now) => [...rows.values()].filter((r) => r.meter === meter && r.keepUntil > now),
    save: (changed) => {
      for (const r of changed) rows.set(`${r.meter}@${r.slot}`, { ...r });
    },
  };
}

const sliding = (limit: number, window_s: number): Meter => ({
  key: 'rate:burst',
  name: 'burst',
  kind: 'rate',
  limit,
  window_s,
  counting: 'sliding',
});

/** Admits one unit at `now` if it fits, as the guard does. */
function tryAdmit(ledger: Ledger, meter: Meter, now: number): boolean {
  const slot = slotAt(meter, now);
  if (ledger.counted(meter, slot, now) + 1 > meter.limit) return false;
  ledger.charge(meter, slot, 1, now);
  return true;
}

describe('Ledger', () => {
  it('never lets more than the limit through in any window-length span (sliding)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 30 }),
        fc.array(fc.integer({ min: 0, max: 120_000 }), { minLength: 1, maxLength: 400 }),
        (limit, windowS, offsets) => {
          const meter = sliding(limit, windowS);
          const ledger = new Ledger(memoryStorage());
          const times = offsets.sort((a, b) => a - b).map((o) => 1_700_000_000_000 + o);
          const admitted = times.filter((t) => tryAdmit(ledger, meter, t));
          // Every span of one window starting at an admission holds at most `limit`.
          for (let i = 0; i < admitted.length; i++) {
            const start = admitted[i] ?? 0;
            const inSpan = admitted.filter((t) => t >= start && t < start + windowS * 1000);
            expect(inSpan.length).toBeLessThanOrEqual(limit);
          }
        },
      ),
      { numRuns: 300, seed: 42 },
    );
  });

  it('lets bursts at the end of one window and the start of the next only up to the limit', () => {
    const meter = sliding(5, 10);
    const ledger = new Ledger(memoryStorage());
    const edge = 1_700_000_010_000;
    const late = Array.from({ length: 5 }, () => tryAdmit(ledger, meter, edge - 100));
    const early = Array.from({ length: 5 }, () => tryAdmit(ledger, meter, edge + 100));
    expect([...late, ...early].filter(Boolean)).toHaveLength(5);
    // One window later the burst has left the count.
    expect(tryAdmit(ledger, meter, edge - 100 + 10_000 + 10_000 / 20)).toBe(true);
  });

  it('takes back refunded units and never goes below zero', () => {
    const meter = sliding(3, 10);
    const ledger = new Ledger(memoryStorage());
    const now = 1_700_000_000_000;
    const slot = slotAt(meter, now);
    ledger.charge(meter, slot, 3, now);
    expect(tryAdmit(ledger, meter, now)).toBe(false);
    ledger.refund(meter.key, slot.start, 2, now);
    expect(ledger.counted(meter, slot, now)).toBe(1);
    ledger.refund(meter.key, slot.start, 5, now);
    expect(ledger.counted(meter, slot, now)).toBe(0);
  });

  it('says when a unit fits again', () => {
    const meter = sliding(2, 10);
    const ledger = new Ledger(memoryStorage());
    const now = 1_700_000_000_000;
    tryAdmit(ledger, meter, now);
    tryAdmit(ledger, meter, now);
    const at = ledger.fitsAgainAt(meter, meter.limit, 1, now);
    expect(at).toBe(slotAt(meter, now).end + 10_000);
    expect(tryAdmit(ledger, meter, at - 1)).toBe(false);
    expect(tryAdmit(ledger, meter, at)).toBe(true);
    expect(ledger.fitsAgainAt(meter, meter.limit, 3, now)).toBe(Number.POSITIVE_INFINITY);
  });

  it('writes changed rows through and reads them back after a restart', () => {
    const storage = memoryStorage();
    const meter = sliding(5, 10);
    const now = 1_700_000_000_000;
    const first = new Ledger(storage);
    tryAdmit(first, meter, now);
    tryAdmit(first, meter, now);
    first.flush();
    const restarted = new Ledger(storage);
    expect(restarted.counted(meter, slotAt(meter, now), now)).toBe(2);
  });
});
