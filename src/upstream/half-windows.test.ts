import { describe, expect, it } from 'vitest';
import { HalfWindowCounts, halfOf } from './half-windows';

/** The counts as a counter built on them reads them. */
class Counts extends HalfWindowCounts {
  protected windowMs(): number {
    return 10_000;
  }
  add(now: number, calls: number, marked: number): void {
    this.tally(now, calls, marked);
  }
  read(now: number): [number, number] {
    return [this.callsIn(now), this.markedIn(now)];
  }
  clear(): void {
    this.clearCounts();
  }
}

describe('half-window counts', () => {
  it('halves a window: 10 s windows change half every 5 s', () => {
    expect([0, 4_999, 5_000, 9_999, 10_000].map((t) => halfOf(t, 10_000))).toEqual([0, 0, 1, 1, 2]);
  });

  it('counts for a whole window at most, both counts alike; clearing starts afresh', () => {
    const counts = new Counts();
    for (let i = 0; i < 4; i++) counts.add(1000 + i, 1, i % 2);
    counts.add(6000, 1, 1);
    expect(counts.read(9_999)).toEqual([5, 3]);
    // The first half is gone once the half after the next began.
    expect(counts.read(10_000)).toEqual([1, 1]);
    counts.clear();
    expect(counts.read(10_000)).toEqual([0, 0]);
    counts.add(10_001, 0, 1);
    expect(counts.read(10_001)).toEqual([0, 1]);
  });

  it('forgets everything after a silence of a whole window', () => {
    const counts = new Counts();
    counts.add(9_000, 3, 2);
    expect(counts.read(14_999)).toEqual([3, 2]);
    expect(counts.read(20_000)).toEqual([0, 0]);
  });
});
