import { describe, expect, it } from 'vitest';
import { type Limits, limitsSchema, metersFor } from './policy';

const at = (iso: string) => Date.parse(iso);
const limits = (l: Partial<Limits>): Limits => ({ policies: [], quota: {}, ...l });

describe('metersFor', () => {
  it('aligns rate windows to the epoch, so every isolate agrees where they start', () => {
    const [burst] = metersFor(
      limits({ policies: [{ name: 'burst', limit: 5, window_s: 10 }] }),
      'teams',
      at('2026-11-21T10:00:07.500Z'),
    );
    expect(burst).toMatchObject({
      key: 'rate:burst',
      name: 'burst',
      kind: 'rate',
      limit: 5,
      window_s: 10,
      windowStart: at('2026-11-21T10:00:00Z'),
      resetAt: at('2026-11-21T10:00:10Z'),
    });
  });

  it('counts quotas per UTC day and calendar month', () => {
    const meters = metersFor(
      limits({ quota: { daily: 10, monthly: 100 } }),
      'teams',
      at('2026-02-14T23:59:59Z'),
    );
    expect(meters.map((m) => [m.key, m.windowStart, m.resetAt, m.window_s])).toEqual([
      ['quota:daily', at('2026-02-14T00:00:00Z'), at('2026-02-15T00:00:00Z'), 86_400],
      ['quota:monthly', at('2026-02-01T00:00:00Z'), at('2026-03-01T00:00:00Z'), 28 * 86_400],
    ]);
  });

  it('adds group quotas only for their group', () => {
    const l = limits({ quota: { groups: { sessions: { daily: 3 } } } });
    expect(metersFor(l, 'sessions', 0).map((m) => m.name)).toEqual(['sessions-daily']);
    expect(metersFor(l, 'teams', 0)).toEqual([]);
    expect(metersFor(l, 'auth', 0)).toEqual([]);
  });

  it('gives a browser partition its share of each rate policy, at least 1', () => {
    const l = limits({
      policies: [
        { name: 'burst', limit: 5, window_s: 10 },
        { name: 'tiny', limit: 1, window_s: 10 },
      ],
    });
    const meters = metersFor(l, 'teams', 0, { id: 'b1', share: 0.5 });
    expect(meters.map((m) => [m.key, m.name, m.limit])).toEqual([
      ['rate:burst', 'burst', 5],
      ['rate:burst:b1', 'burst-browser', 2],
      ['rate:tiny', 'tiny', 1],
      ['rate:tiny:b1', 'tiny-browser', 1],
    ]);
  });
});

describe('limitsSchema', () => {
  it('refuses reserved and duplicate policy names', () => {
    for (const name of ['daily', 'monthly', 'x-daily', 'x-browser']) {
      expect(
        limitsSchema.safeParse({ policies: [{ name, limit: 1, window_s: 1 }] }).success,
        name,
      ).toBe(false);
    }
    const twice = { name: 'burst', limit: 1, window_s: 1 };
    expect(limitsSchema.safeParse({ policies: [twice, twice] }).success).toBe(false);
  });
});
