import { describe, expect, it } from 'vitest';
import { BrokerWants } from './broker-wants';

const slot = { start: 0, end: 3000 };

describe('BrokerWants (the root sharing a meter among brokers)', () => {
  it('gives each broker what it wants while what is left covers every want', () => {
    const wants = new BrokerWants();
    expect(wants.share('m', slot, 'a', 100, 1000, 0)).toEqual({ units: 100, spentUntil: null });
    expect(wants.share('m', slot, 'b', 300, 900, 0)).toEqual({ units: 300, spentUntil: null });
  });

  it('never gives one broker more than half of what is left, unless two units or fewer', () => {
    const wants = new BrokerWants();
    expect(wants.share('m', slot, 'a', 100, 60, 0).units).toBe(30);
    expect(wants.share('other', slot, 'a', 5, 2, 0).units).toBe(2);
  });

  it('splits a share period in proportion to the wants when they exceed it, and says when a share is spent', () => {
    const wants = new BrokerWants();
    // 1,000 units for wants of 400 (small) and 3,600 (big): a tenth and nine tenths.
    expect(wants.share('m', slot, 'small', 400, 1000, 0).units).toBe(400);
    // Half of what is left limits the big one, not its share: it may come back.
    expect(wants.share('m', slot, 'big', 3600, 600, 1)).toEqual({ units: 300, spentUntil: null });
    // The small broker already had more than its tenth of the period: nothing more until it ends.
    expect(wants.share('m', slot, 'small', 400, 300, 2)).toEqual({ units: 0, spentUntil: 3000 });
    // The big one still has 600 of its 900 to come (within half of what is left).
    expect(wants.share('m', slot, 'big', 3600, 300, 3).units).toBe(150);
  });

  it('never tells a lone broker its share is spent while units are left', () => {
    const wants = new BrokerWants();
    let left = 150;
    for (let i = 0; i < 6; i++) {
      const share = wants.share('m', slot, 'only', 4000, left, i);
      expect(share.spentUntil).toBeNull();
      left -= share.units;
    }
    expect(left).toBeLessThan(5);
  });

  it('forgets a want after 10 s', () => {
    const wants = new BrokerWants();
    wants.share('m', slot, 'gone', 900, 10_000, 0);
    const later = { start: 9000, end: 12_000 };
    // 'gone' still counts at 9 s: the period's 150 units are shared 100 : 900.
    expect(wants.share('m', later, 'a', 100, 150, 9000).units).toBe(15);
    expect(wants.share('m', { start: 12_000, end: 15_000 }, 'a', 100, 150, 12_001).units).toBe(75);
  });
});
