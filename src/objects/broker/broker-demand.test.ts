import { describe, expect, it } from 'vitest';
import { Demand } from './broker-demand';

describe('Demand (a region’s use of a scope, as its broker sees it)', () => {
  it('takes a young scope’s rate over its age, not over the whole memory', () => {
    const d = new Demand(0);
    // 200 units a second for 2 s: a 5 s lease wants about twice 1,000.
    for (let t = 0; t < 2000; t += 10) d.add(2, t);
    expect(d.want(2000, 5000)).toBeGreaterThan(1800);
    expect(d.want(2000, 5000)).toBeLessThan(2400);
  });

  it('counts what isolates used: units given back leave the demand', () => {
    const used = new Demand(0);
    const held = new Demand(0);
    for (let t = 0; t < 2000; t += 10) {
      used.add(2, t);
      held.add(4, t);
      held.remove(2, t);
    }
    expect(held.want(2000, 5000)).toBe(used.want(2000, 5000));
  });

  it('asks for a few units however quiet the region', () => {
    expect(new Demand(0).want(60_000, 1000)).toBe(4);
  });
});
