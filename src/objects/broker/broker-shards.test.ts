import { describe, expect, it } from 'vitest';
import { CallRate, MAX_BROKER_SHARDS, SPLIT_CALLS_PER_S, spreadAdvice } from './broker-shards';

describe('broker shards', () => {
  it('advises no split up to the split point, then enough shards for ~150 calls/s each', () => {
    expect(spreadAdvice(SPLIT_CALLS_PER_S, 1)).toBeUndefined();
    expect(spreadAdvice(SPLIT_CALLS_PER_S + 1, 1)).toBe(2);
    expect(spreadAdvice(1000, 1)).toBe(8);
    expect(spreadAdvice(300, 4)).toBe(8);
    expect(spreadAdvice(5000, 4)).toBe(MAX_BROKER_SHARDS);
    expect(spreadAdvice(5000, MAX_BROKER_SHARDS)).toBeUndefined();
  });

  it('counts the calls of the last second, in quarter-second steps, and forgets after quiet', () => {
    const rate = new CallRate();
    for (let t = 0; t < 1000; t += 10) rate.record(10_000 + t);
    expect(rate.perSecond(10_999)).toBe(100);
    // A quarter of a second later, the oldest quarter (25 calls) has left the window.
    expect(rate.perSecond(11_000)).toBe(75);
    expect(rate.perSecond(11_750)).toBe(0);
    rate.record(20_000);
    expect(rate.perSecond(20_000)).toBe(1);
  });
});
