import { describe, expect, it } from 'vitest';
import { retryDelay } from './sink';

describe('retryDelay', () => {
  it('doubles from the base, at most 300 s: 10 retries cover a sink down for half an hour', () => {
    const delays = Array.from({ length: 10 }, (_, i) => retryDelay(i + 1, 10));
    expect(delays).toEqual([10, 20, 40, 80, 160, 300, 300, 300, 300, 300]);
    expect(delays.reduce((a, b) => a + b)).toBe(1810);
    expect(retryDelay(1, 1)).toBe(1);
    expect(retryDelay(40, 1)).toBe(300);
  });
});
