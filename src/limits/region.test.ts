import { describe, expect, it } from 'vitest';
import { shardOf } from './region';

describe('broker shards, as an isolate picks one', () => {
  it('puts a data center on the same shard every time, within range, and spreads 300 of them', () => {
    expect(shardOf('FRA', 1)).toBe(0);
    // The same in every isolate and every release (FNV-1a of the name): pinned.
    expect([shardOf('FRA', 8), shardOf('SJC', 8), shardOf('NRT', 16)]).toEqual([0, 1, 7]);
    const counts = new Array(8).fill(0);
    for (let i = 0; i < 300; i++) {
      const shard = shardOf(`dc${i}`, 8);
      expect(shard).toBeGreaterThanOrEqual(0);
      expect(shard).toBeLessThan(8);
      counts[shard]++;
    }
    // Every shard gets some, none more than twice its fair share.
    expect(Math.min(...counts)).toBeGreaterThan(0);
    expect(Math.max(...counts)).toBeLessThanOrEqual((2 * 300) / 8);
  });
});
