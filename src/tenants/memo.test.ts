import { describe, expect, it } from 'vitest';
import { Memo } from './memo';

describe('Memo', () => {
  it('keeps a value for its time to live, with time passed in', () => {
    const memo = new Memo<string>(10);
    memo.set('a', 'x', 1000, 0);
    expect(memo.get('a', 999)).toBe('x');
    expect(memo.get('a', 1000)).toBeUndefined();
  });

  it('remembers null, so a miss is memoized too', () => {
    const memo = new Memo<string | null>(10);
    memo.set('gone', null, 1000, 0);
    expect(memo.get('gone', 1)).toBeNull();
  });

  it('never grows past its cap, dropping the oldest entry', () => {
    const memo = new Memo<number>(3);
    for (let i = 0; i < 5; i++) memo.set(`k${i}`, i, 1000, 0);
    expect(['k0', 'k1', 'k2', 'k3', 'k4'].map((k) => memo.get(k, 1))).toEqual([
      undefined,
      undefined,
      2,
      3,
      4,
    ]);
  });

  it('does not store with a zero time to live', () => {
    const memo = new Memo<number>(3);
    memo.set('a', 1, 0, 0);
    expect(memo.get('a', 0)).toBeUndefined();
  });
});
