import { describe, expect, it } from 'vitest';
import { type Limits, limitsSchema, type MeterOptions, metersFor } from './policy';

const limits = (l: Partial<Limits>): Limits => ({ policies: [], quota: {}, ...l });
const options: MeterOptions = { partitionShare: 0.5, largestCost: 1 };
const scope = { group: 'teams' as const, tokenId: 'tok_a' };

describe('metersFor', () => {
  it('counts rate policies in sliding windows unless they ask for fixed ones', () => {
    const l = limits({
      policies: [
        { name: 'burst', limit: 5, window_s: 10 },
        { name: 'hourly', limit: 100, window_s: 3600, algorithm: 'fixed' },
      ],
    });
    expect(metersFor(l, null, scope, options)).toEqual([
      {
        key: 'rate:burst',
        name: 'burst',
        kind: 'rate',
        limit: 5,
        window_s: 10,
        counting: 'sliding',
      },
      {
        key: 'rate:hourly',
        name: 'hourly',
        kind: 'rate',
        limit: 100,
        window_s: 3600,
        counting: 'fixed',
      },
    ]);
  });

  it('counts quotas per UTC day and calendar month', () => {
    const meters = metersFor(limits({ quota: { daily: 10, monthly: 100 } }), null, scope, options);
    expect(meters.map((m) => [m.key, m.name, m.counting])).toEqual([
      ['quota:daily', 'daily', 'day'],
      ['quota:monthly', 'monthly', 'month'],
    ]);
  });

  it('adds group quotas only for their group', () => {
    const l = limits({ quota: { groups: { sessions: { daily: 3 } } } });
    const names = (group: 'sessions' | 'teams' | 'auth') =>
      metersFor(l, null, { group, tokenId: 't' }, options).map((m) => m.name);
    expect(names('sessions')).toEqual(['sessions-daily']);
    expect(names('teams')).toEqual([]);
    expect(names('auth')).toEqual([]);
  });

  it('gives a browser partition its share of each rate policy, never below the dearest', () => {
    const l = limits({
      policies: [
        { name: 'burst', limit: 40, window_s: 10 },
        { name: 'small', limit: 5, window_s: 10 },
        { name: 'tiny', limit: 1, window_s: 10 },
      ],
    });
    const meters = metersFor(
      l,
      null,
      { ...scope, partition: 'b1' },
      { partitionShare: 0.5, largestCost: 5 },
    );
    expect(meters.map((m) => [m.key, m.name, m.limit])).toEqual([
      ['rate:burst', 'burst', 40],
      ['rate:burst:b1', 'burst-browser', 20],
      ['rate:small', 'small', 5],
      // Half of 5 would be 2, too few for a request costing 5: the share is raised to 5.
      ['rate:small:b1', 'small-browser', 5],
      ['rate:tiny', 'tiny', 1],
      // Never above the tenant's own limit.
      ['rate:tiny:b1', 'tiny-browser', 1],
    ]);
  });

  it("counts a token's own limits besides its tenant's, under names that say so", () => {
    const meters = metersFor(
      limits({ policies: [{ name: 'burst', limit: 50, window_s: 10 }] }),
      { policies: [{ name: 'burst', limit: 10, window_s: 1 }], quota: { daily: 100 } },
      scope,
      options,
    );
    expect(meters.map((m) => [m.key, m.name, m.limit])).toEqual([
      ['rate:burst', 'burst', 50],
      ['token:tok_a:rate:burst', 'burst-token', 10],
      ['token:tok_a:quota:daily', 'token-daily', 100],
    ]);
  });
});

describe('limitsSchema', () => {
  it('refuses reserved and duplicate policy names', () => {
    for (const name of ['daily', 'monthly', 'x-daily', 'x-browser', 'x-token']) {
      expect(
        limitsSchema.safeParse({ policies: [{ name, limit: 1, window_s: 1 }] }).success,
        name,
      ).toBe(false);
    }
    const twice = { name: 'burst', limit: 1, window_s: 1 };
    expect(limitsSchema.safeParse({ policies: [twice, twice] }).success).toBe(false);
  });

  it('takes a limiter mode and a counting algorithm', () => {
    const parsed = limitsSchema.parse({
      policies: [{ name: 'b', limit: 1, window_s: 1, algorithm: 'fixed' }],
      limiter: 'exact',
    });
    expect(parsed).toMatchObject({ limiter: 'exact', policies: [{ algorithm: 'fixed' }] });
    expect(limitsSchema.safeParse({ policies: [], limiter: 'loose' }).success).toBe(false);
  });
});
