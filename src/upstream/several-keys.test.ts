import { describe, expect, it } from 'vitest';
import { DistinctKeys, NEVER_COUNTED, RecentCalls } from './several-keys';

/** Keys as their remembered half, counted through one DistinctKeys. */
function counter(windowMs = 10_000) {
  const keys = new DistinctKeys(windowMs);
  const marks = new Map<string, number>();
  return {
    note(key: string, now: number) {
      marks.set(key, keys.note(marks.get(key) ?? NEVER_COUNTED, now));
    },
    count: (now: number) => keys.count(now),
    forget: () => keys.forget(),
  };
}

describe('several keys', () => {
  it('counts each key once, however often it does it', () => {
    const c = counter();
    for (let i = 0; i < 100; i++) c.note('busy', i * 10);
    c.note('quiet', 500);
    expect(c.count(1000)).toBe(2);
  });

  it('counts a key for half a window at least and a whole one at most', () => {
    const c = counter();
    c.note('a', 0);
    c.note('b', 4000);
    c.note('c', 6000);
    // Halves of 5 s: at 9.9 s the half before (0-5 s) still counts.
    expect(c.count(9_900)).toBe(3);
    // At 10 s a and b (first half) are gone, c (second half) counts.
    expect(c.count(10_000)).toBe(1);
    c.note('c', 12_000);
    c.note('a', 12_500);
    expect(c.count(14_000)).toBe(2);
    expect(c.count(19_999)).toBe(2);
    expect(c.count(20_000)).toBe(0);
  });

  it('a key seen in both halves is one key', () => {
    const c = counter();
    c.note('a', 1000);
    c.note('a', 6000);
    c.note('b', 6000);
    expect(c.count(6000)).toBe(2);
    c.note('a', 11_000);
    expect(c.count(11_000)).toBe(2);
  });

  it('forget() starts afresh: keys counted before count again only when they do it again', () => {
    const c = counter();
    c.note('a', 1000);
    c.note('b', 1000);
    c.forget();
    expect(c.count(1000)).toBe(0);
    c.note('a', 1100);
    expect(c.count(1100)).toBe(1);
  });

  it('counts calls, not keys, for a whole window at most; forget() starts afresh', () => {
    const calls = new RecentCalls(10_000);
    for (let i = 0; i < 4; i++) calls.add(1000 + i);
    calls.add(6000);
    expect(calls.count(9_999)).toBe(5);
    expect(calls.count(10_000)).toBe(1);
    calls.forget();
    expect(calls.count(10_000)).toBe(0);
    calls.add(10_001);
    expect(calls.count(10_001)).toBe(1);
  });
});
