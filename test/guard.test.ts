/**
 * The TenantGuard Durable Object itself, with injected time: windows that
 * roll over, quotas that reset at their calendar boundary, exactness under
 * concurrency, and counters that survive eviction.
 */
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import type { LeaseRequest } from '../src/metering/lease-protocol';
import type { Limits, Scope } from '../src/metering/policy';
import { AUDIT_MAX_ENTRIES } from '../src/objects/audit/audit-log';
import { guardFor, guardStub } from '../src/objects/tenant/tenant-guard';
import { testEnv } from './helpers';

/** A fresh guard: its stub, for the test harness, and its parts, as callers reach them. */
function guard() {
  const name = `guard-test-${crypto.randomUUID()}`;
  return { stub: guardStub(testEnv, name), parts: guardFor(testEnv, name) };
}

const limits = (l: Partial<Limits>): Limits => ({ policies: [], quota: {}, ...l });
const at = (iso: string) => Date.parse(iso);
/** One waiting request of cost 1 and nothing more leased: what an exact-mode isolate asks. */
const req = (now: number, defaults: Limits, scope: Partial<Scope> = {}): LeaseRequest => ({
  now,
  start: now,
  leaseMaxMs: 0,
  defaults,
  meterOptions: { partitionShare: 1, largestCost: 1 },
  scopes: [{ group: 'teams', tokenId: 'tok_a', ...scope, cost: 1, want: 0 }],
  returns: [],
  renewal: false,
});

/** The waiting request's refusal, or null when it was admitted. */
async function refusal(g: ReturnType<typeof guard>, r: LeaseRequest) {
  const answer = await g.parts.limits().acquire(r);
  return answer.scopes[0]?.refusal ?? null;
}

describe('TenantGuard', () => {
  it('lets exactly L of N concurrent requests through', async () => {
    const g = guard();
    const l = limits({ policies: [{ name: 'burst', limit: 7, window_s: 60 }] });
    const now = at('2026-11-21T10:00:05Z');
    const answers = await Promise.all(Array.from({ length: 100 }, () => refusal(g, req(now, l))));
    expect(answers.filter((r) => r === null)).toHaveLength(7);
    expect(answers.filter((r) => r?.reason === 'rate')).toHaveLength(93);
  });

  it('rolls a window over at its boundary', async () => {
    const g = guard();
    const l = limits({ policies: [{ name: 'burst', limit: 2, window_s: 10, algorithm: 'fixed' }] });
    const start = at('2026-11-21T10:00:00Z');
    expect(await refusal(g, req(start + 1000, l))).toBeNull();
    expect(await refusal(g, req(start + 2000, l))).toBeNull();
    expect(await refusal(g, req(start + 9999, l))).toMatchObject({
      reason: 'rate',
      violated: 'burst',
      retryAfter: 1,
    });
    expect(await refusal(g, req(start + 10_000, l))).toBeNull();
  });

  it('resets the daily quota at UTC midnight and the monthly one on the 1st', async () => {
    const g = guard();
    const l = limits({ quota: { daily: 2, monthly: 3 } });
    expect(await refusal(g, req(at('2026-11-30T23:59:58Z'), l))).toBeNull();
    expect(await refusal(g, req(at('2026-11-30T23:59:58Z'), l))).toBeNull();
    expect(await refusal(g, req(at('2026-11-30T23:59:59Z'), l))).toMatchObject({
      reason: 'quota',
      violated: 'daily',
      retryAfter: 1,
    });
    // New day, same month: the daily quota is fresh, the monthly one has 1 left.
    expect(await refusal(g, req(at('2026-12-01T00:00:00Z'), l))).toBeNull();
    expect(await refusal(g, req(at('2026-12-01T00:00:01Z'), l))).toBeNull();
  });

  it('names the monthly quota when the month is used up', async () => {
    const g = guard();
    const l = limits({ quota: { daily: 10, monthly: 2 } });
    await refusal(g, req(at('2026-11-10T12:00:00Z'), l));
    await refusal(g, req(at('2026-11-11T12:00:00Z'), l));
    expect(await refusal(g, req(at('2026-11-12T12:00:00Z'), l))).toEqual({
      reason: 'quota',
      violated: 'monthly',
      retryAfter: (at('2026-12-01T00:00:00Z') - at('2026-11-12T12:00:00Z')) / 1000,
    });
    expect(await refusal(g, req(at('2026-12-01T00:00:00Z'), l))).toBeNull();
  });

  it('prefers the quota when both a rate window and a quota are exhausted', async () => {
    const g = guard();
    const l = limits({
      policies: [{ name: 'burst', limit: 1, window_s: 10 }],
      quota: { daily: 1 },
    });
    const now = at('2026-11-21T10:00:00Z');
    await refusal(g, req(now, l));
    expect(await refusal(g, req(now, l))).toMatchObject({
      reason: 'quota',
      violated: 'daily',
    });
  });

  it('keeps counters when the object is evicted and restarted', async () => {
    const g = guard();
    const l = limits({ policies: [{ name: 'burst', limit: 3, window_s: 3600 }] });
    const now = at('2026-11-21T10:00:00Z');
    await refusal(g, req(now, l));
    await refusal(g, req(now, l));
    await evictDurableObject(g.stub);
    expect(await refusal(g, req(now + 1, l))).toBeNull();
    expect(await refusal(g, req(now + 2, l))).not.toBeNull();
  });

  it('refuses a revoked token and only that one', async () => {
    const g = guard();
    const l = limits({});
    const minted = {
      id: 'tok_a',
      hash: 'a'.repeat(64),
      prefix: 'apgw_aaaa',
      last4: 'aaaa',
      tag_kid: 'k2',
    };
    const spec = { name: 'a', scopes: ['teams:read'], expires_at: null };
    await g.parts.tokens().issue('ten_guardtest', minted, spec, null, 0);
    const ctx = { request_id: 'test', actor: 'test', ip: null, colo: null };
    await g.parts.tokens().revoke('ten_guardtest', 'tok_a', false, 0, ctx);
    expect(await refusal(g, req(1, l))).toEqual({ reason: 'revoked' });
    expect(await refusal(g, req(1, l, { tokenId: 'tok_b' }))).toBeNull();
  });

  it('counts a partition inside the tenant limits', async () => {
    const g = guard();
    const l = limits({ policies: [{ name: 'burst', limit: 3, window_s: 60 }] });
    const now = at('2026-11-21T10:00:00Z');
    await refusal(g, req(now, l, { partition: 'b1' }));
    await refusal(g, req(now, l, { partition: 'b1' }));
    await refusal(g, req(now, l));
    // The tenant-wide window is full, so neither partition nor tenant passes.
    expect(await refusal(g, req(now, l, { partition: 'b2' }))).not.toBeNull();
  });

  it('sweeps away counter rows of ended windows that browser tokens leave behind', async () => {
    const g = guard();
    const l = limits({ policies: [{ name: 'burst', limit: 10, window_s: 60 }] });
    const longAgo = Date.now() - 3_600_000;
    for (const partition of ['b1', 'b2', 'b3']) await refusal(g, req(longAgo, l, { partition }));
    await refusal(g, req(Date.now(), l, { partition: 'b4' }));
    const rows = () =>
      runInDurableObject(
        g.stub,
        (_, state) =>
          state.storage.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM slots').one().n,
      );
    // The tenant's slot and each browser token's, an hour ago and now.
    expect(await rows()).toBe(6);
    expect(await runDurableObjectAlarm(g.stub)).toBe(true);
    // Only the current window's rows are left: the tenant's and b4's.
    expect(await rows()).toBe(2);
    expect(await refusal(g, req(Date.now(), l, { partition: 'b4' }))).toBeNull();
  });

  it('forgets quota alerts of periods long over, and remembers this month’s', async () => {
    const g = guard();
    const day = 86_400_000;
    const sent = (sql?: string) =>
      runInDurableObject(g.stub, (_, state) => {
        if (sql) state.storage.sql.exec(sql);
        return state.storage.sql
          .exec<{ period_start: number }>('SELECT period_start FROM alerts_sent ORDER BY 1')
          .toArray()
          .map((r) => r.period_start);
      });
    const old = Date.now() - 90 * day;
    const current = Date.now() - 20 * day;
    await sent(
      `INSERT INTO alerts_sent (meter, period_start, threshold) VALUES ('q', ${old}, 80), ('q', ${current}, 80)`,
    );
    // Any admission schedules the sweeping alarm.
    await refusal(
      g,
      req(Date.now(), limits({ policies: [{ name: 'burst', limit: 9, window_s: 60 }] })),
    );
    expect(await runDurableObjectAlarm(g.stub)).toBe(true);
    expect(await sent()).toEqual([current]);
  });
});

describe('AuditLog', () => {
  it('keeps only the newest AUDIT_MAX_ENTRIES entries', async () => {
    const log = testEnv.AUDIT_LOG.get(
      testEnv.AUDIT_LOG.idFromName(`audit-test-${crypto.randomUUID()}`),
    );
    const entry = { action: 'test', tenant_id: null, token_id: null, request_id: 'r', detail: {} };
    await log.record(entry);
    await log.record(entry);
    // Jump the id sequence as if AUDIT_MAX_ENTRIES entries had been written since.
    await runInDurableObject(log, (_, state) => {
      state.storage.sql.exec(
        "INSERT INTO entries (id, at, action, request_id, detail) VALUES (?, '', 'filler', 'r', '{}')",
        AUDIT_MAX_ENTRIES + 1,
      );
    });
    await log.record(entry);
    const page = (await log.list(1, 100)) as unknown as { data: { id: number }[] };
    expect(page.data.map((e) => e.id)).toEqual([AUDIT_MAX_ENTRIES + 2, AUDIT_MAX_ENTRIES + 1]);
  });
});
