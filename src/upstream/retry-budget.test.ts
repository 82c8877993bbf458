import { describe, expect, it } from 'vitest';
import { RetryBudget } from './retry-budget';

const budget = (minPerSecond = 0) => {
  const b = new RetryBudget({ ratio: 0.1, minPerSecond, windowMs: 10_000 });
  return {
    noteCall: (now: number) => b.noteCall(now),
    /** One retry if there is room, as upstream-health.ts takes it. */
    tryRetry: (now: number) => {
      if (!b.hasRoom(now)) return false;
      b.spend(now);
      return true;
    },
  };
};

describe('retry budget', () => {
  it('allows retries up to a tenth of the calls of the window', () => {
    const b = budget();
    for (let i = 0; i < 100; i++) b.noteCall(i * 10);
    let granted = 0;
    for (let i = 0; i < 50; i++) if (b.tryRetry(1000 + i)) granted++;
    expect(granted).toBe(10);
  });

  it('allows a few per second in quiet times, and no more than a tenth when busy', () => {
    const quiet = budget(2);
    quiet.noteCall(0);
    let granted = 0;
    for (let i = 0; i < 50; i++) if (quiet.tryRetry(i)) granted++;
    // 2 per second over a 10 s window.
    expect(granted).toBe(20);
    const busy = budget(2);
    for (let i = 0; i < 1000; i++) busy.noteCall(i);
    granted = 0;
    for (let i = 0; i < 500; i++) if (busy.tryRetry(1000 + i)) granted++;
    expect(granted).toBe(100);
  });

  it('forgets calls and retries older than the window', () => {
    const b = budget();
    for (let i = 0; i < 100; i++) b.noteCall(i);
    for (let i = 0; i < 10; i++) expect(b.tryRetry(200)).toBe(true);
    expect(b.tryRetry(200)).toBe(false);
    // 11 s on, the old calls earn nothing and the old retries cost nothing.
    for (let i = 0; i < 20; i++) b.noteCall(11_500);
    expect(b.tryRetry(11_500)).toBe(true);
    expect(b.tryRetry(11_500)).toBe(true);
    expect(b.tryRetry(11_500)).toBe(false);
  });

  it('under 50 % failures, retries stay at most a tenth of the calls', () => {
    const b = budget();
    let calls = 0;
    let retries = 0;
    for (let t = 0; t < 60_000; t += 5) {
      b.noteCall(t);
      calls++;
      if (t % 10 === 0 && b.tryRetry(t)) retries++;
    }
    expect(retries / calls).toBeLessThanOrEqual(0.1);
    expect(retries / calls).toBeGreaterThan(0.09);
  });
});
