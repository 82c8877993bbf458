import { describe, expect, it } from 'vitest';
import { type RequestRow, RequestSample } from './usage';

const row = (at: number, status: number) => ({ at, status }) as RequestRow;

describe('a sample of requests', () => {
  it('keeps the newest of each kind, answered and failed apart, and empties when taken', () => {
    const sample = new RequestSample(2);
    for (let at = 1; at <= 5; at++) sample.add(row(at, 200));
    sample.add(row(6, 429));
    expect(sample.size).toBe(3);
    // A flood of successes does not push out the one refusal, nor the other way round.
    expect(sample.take().map((r) => [r.at, r.status])).toEqual([
      [4, 200],
      [5, 200],
      [6, 429],
    ]);
    expect(sample.size).toBe(0);
    expect(sample.take()).toEqual([]);
  });
});
