/**
 * The limits part alone, on node:sqlite with injected time (the other parts of the
 * guard beside it, nowhere to reach but what the test watches): exact counting and
 * the refusal it names, a token's and the tenant's standing, the brokers told of an
 * operator change, plans kept by their decision number, the unused units of a lease
 * given back, and the usage views. (Leases' shares: lease-share.test.ts and
 * objects/broker/broker.test.ts; in workerd: test/guard.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { detachedGuard, detachedIo, revokeAt } from '../../../../scripts/sim/tenant-io';
import type { BrokerPush, LeaseRequest } from '../../../metering/lease-protocol';
import type { Limits } from '../../../metering/policy';
import { isolateAsk } from './lease-ask.fixture';

const T0 = Date.parse('2026-11-24T12:00:00Z');
const HOUR = 3_600_000;
const hourly = (limit: number): Limits => ({
  policies: [{ name: 'hourly', limit, window_s: 3600, algorithm: 'fixed' }],
  quota: {},
  limiter: 'exact',
});
const scope = { group: 'teams' as const, tokenId: 'tok_a' };
const exact = (limits: Limits, now: number, cost = 1): LeaseRequest => ({
  ...isolateAsk(limits, now, scope, { cost }),
  leaseMaxMs: 0,
});
const refusal = (answer: { scopes: { refusal: unknown }[] }) => answer.scopes[0]?.refusal ?? null;

describe('the limits part', () => {
  it('counts exactly: the limit in a window, then a refusal naming when it fits again', () => {
    const { limits } = detachedGuard(hourly(2));
    const at = T0 + 10 * 60_000;
    expect(refusal(limits.acquire(exact(hourly(2), at)))).toBeNull();
    expect(refusal(limits.acquire(exact(hourly(2), at)))).toBeNull();
    expect(refusal(limits.acquire(exact(hourly(2), at)))).toEqual({
      reason: 'rate',
      violated: 'hourly',
      retryAfter: 50 * 60,
    });
    expect(refusal(limits.acquire(exact(hourly(2), T0 + HOUR)))).toBeNull();
    expect(refusal(limits.acquire(exact(hourly(2), T0 + HOUR, 3)))).toEqual({
      reason: 'too_costly',
      violated: 'hourly',
      limit: 2,
    });
  });

  it('refuses a revoked token and a disabled tenant, whatever their meters hold', () => {
    const guard = detachedGuard(hourly(100));
    revokeAt(guard, 'tok_a', T0);
    expect(refusal(guard.limits.acquire(exact(hourly(100), T0)))).toEqual({ reason: 'revoked' });
    const other = {
      ...exact(hourly(100), T0),
      scopes: [{ ...scope, tokenId: 'tok_b', cost: 1, want: 0 }],
    };
    expect(refusal(guard.limits.acquire(other))).toBeNull();
    guard.tenantStanding.setDisabled(true);
    const answer = guard.limits.acquire(other);
    expect(answer.disabled).toBe(true);
    expect(refusal(answer)).toEqual({ reason: 'disabled' });
  });

  it('tells the brokers holding a lease of new limits, and keeps a plan only when newer', async () => {
    const told: { name: string; push: BrokerPush }[] = [];
    const guard = detachedGuard(
      undefined,
      detachedIo(() => T0, { sendToBroker: async (name, push) => void told.push({ name, push }) }),
    );
    const leased: Limits = { policies: [{ name: 'burst', limit: 1000, window_s: 60 }], quota: {} };
    guard.limits.acquire({ ...isolateAsk(leased, T0, scope, { want: 50 }), holder: 't@weur' });
    expect(await guard.limits.setLimits(hourly(5), leased)).toEqual(hourly(5));
    expect(told).toEqual([{ name: 't@weur', push: { kind: 'reset' } }]);
    // A plan under the tenant's own limits changes nothing in force: nobody is told.
    await guard.limits.applyPlan({ name: 'gold', version: 2, limits: hourly(9) });
    expect(told).toHaveLength(1);
    await guard.limits.setLimits(null, leased);
    expect(guard.limits.usage(T0, leased)).toMatchObject({ plan: 'gold', limits: hourly(9) });
    // An older decision, arriving late, is not kept.
    await guard.limits.applyPlan({ name: 'silver', version: 1, limits: hourly(3) });
    expect(guard.limits.usage(T0, leased)).toMatchObject({ plan: 'gold', custom: false });
  });

  it('gives back the unused units of an ended lease, and counts the calls it answered', () => {
    const leased: Limits = { policies: [{ name: 'burst', limit: 80, window_s: 60 }], quota: {} };
    const { limits } = detachedGuard(leased);
    const answer = limits.acquire(isolateAsk(leased, T0, scope, { cost: 1, want: 100 }));
    const grant = answer.meters[0];
    expect(grant?.leased).toBeGreaterThan(0);
    const used = () => limits.usage(T0, leased).meters[0]?.remaining;
    const before = used();
    limits.record({ rows: [], refusals: [] }, 90, [
      { meter: grant?.key ?? '', slot: grant?.slot ?? 0, units: grant?.leased ?? 0 },
    ]);
    expect(used()).toBe((before ?? 0) + (grant?.leased ?? 0));
    expect(limits.usage(T0, leased).guard_calls).toMatchObject({ acquires: 1 });
  });

  it('shows leased units as reserved until the requests that spent them report it', () => {
    const leased: Limits = { policies: [{ name: 'burst', limit: 800, window_s: 60 }], quota: {} };
    const { limits } = detachedGuard(leased);
    const answer = limits.acquire(isolateAsk(leased, T0, scope, { cost: 1, want: 40 }));
    const grant = answer.meters[0];
    const onLease = grant?.leased ?? 0;
    expect(onLease).toBeGreaterThan(3);
    const shown = () => limits.usage(T0, leased).meters.map((m) => [m.used, m.reserved]);
    // The waiting request was admitted here (spent); the lease is only reserved.
    expect(shown()).toEqual([[1, onLease]]);
    // The isolate admitted 3 from its lease, and reports them with its batch.
    limits.record({
      rows: [],
      refusals: [],
      spent: [{ meter: grant?.key ?? '', slot: grant?.slot ?? 0, units: 3 }],
    });
    expect(shown()).toEqual([[4, onLease - 3]]);
    // Its lease ends: the rest comes back, and nothing is reserved any more.
    limits.record({ rows: [], refusals: [] }, 90, [
      { meter: grant?.key ?? '', slot: grant?.slot ?? 0, units: onLease - 3 },
    ]);
    expect(shown()).toEqual([[4, 0]]);
  });

  it("shows a token its own meters beside the tenant's, and its history in its own view", () => {
    const guard = detachedGuard(hourly(10));
    guard.tokenStanding.putLimits('tok_a', {
      policies: [{ name: 'own', limit: 3, window_s: 60 }],
      quota: {},
    });
    guard.limits.acquire(exact(hourly(10), T0));
    // Admitted by the guard itself: spent at once, nothing reserved.
    const shown = () =>
      guard.limits.usage(T0, hourly(10), 'tok_a').meters.map((m) => [m.name, m.used, m.reserved]);
    expect(shown()).toEqual([
      ['hourly', 1, 0],
      ['own-token', 1, 0],
    ]);
    guard.limits.record({
      rows: [
        {
          hour: T0,
          tokenId: 'tok_a',
          route: 'team.list',
          status: '2xx',
          requests: 1,
          units: 1,
          latency: [1],
        },
      ],
      refusals: [],
    });
    const usage = guard.limits.usage(T0, hourly(10), 'tok_a');
    const view = guard.limits.ownView(T0, hourly(10), 'tok_a', [
      { from: T0, to: T0, granularity: 'hour', groupBy: [] },
    ]);
    expect(view.usage).toEqual(usage);
    expect(view.history[0]?.series.map((p) => p.requests)).toEqual([1]);
  });
});
