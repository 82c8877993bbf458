/**
 * Recent requests (docs/OBSERVABILITY.md, "Recent requests"): a tenant's TenantGuard
 * keeps its recent requests as the isolates hand them over with their usage batches.
 * A refused request is found by its id, by the operator and by its partner (who sees
 * only its own tenant's refused and failed ones, with the reason); the rows hold no
 * secret and no query value; a flood of successes never pushes out the failures.
 */
import { evictDurableObject, runInDurableObject } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RECENT_KEPT, type RequestRow } from '../src/objects/tenant/recent/recent-requests-part';
import { guardFor, guardStub } from '../src/objects/tenant/tenant-guard';
import { loadSettings } from '../src/settings';
import {
  admin,
  asTenant,
  createTenant,
  envelope,
  expectRefusal,
  platformKeys,
  type TestTenant,
  testEnv,
} from './helpers';

/** Exact mode with a tight hourly policy: each request's guard call carries the ones before it. */
async function limited(t: TestTenant, limit: number) {
  await admin(`/tenants/${t.id}/limits`, {
    method: 'PUT',
    body: JSON.stringify({
      policies: [{ name: 'hourly', limit, window_s: 3600, algorithm: 'fixed' }],
      quota: {},
      limiter: 'exact',
    }),
  });
}

/**
 * A request refused in the isolate (its window known full: a refusal lease) makes no guard
 * call; its row rides with the next one, made once the lease has ended: LEASE_MAX_MS on
 * the isolate's clock (injected time), or the usage timer's.
 */
const { LEASE_MAX_MS } = loadSettings(testEnv);
const clockHeld = () => vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
const pastRefusalLease = () => vi.setSystemTime(Date.now() + LEASE_MAX_MS);
afterEach(() => vi.useRealTimers());

const requestsOf = async (t: TestTenant, query = '') =>
  envelope(await admin(`/tenants/${t.id}/requests${query}`));

describe('recent requests', () => {
  it('a refused request is found by its id, with its token, operation, code, policy and reason', async () => {
    const t = await createTenant();
    await limited(t, 2);
    clockHeld();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { res, id } = await asTenant(t, '/agent/lists?page_size=5');
      ids.push(id);
      expect(res.status).toBe(i < 2 ? 200 : 429);
    }
    // The refused one rides with the next request's guard call.
    pastRefusalLease();
    await asTenant(t, '/agent/lists');
    const refusedId = ids[2] ?? '';
    const found = await requestsOf(t, `?request_id=${encodeURIComponent(refusedId)}`);
    expect(found.data.requests).toHaveLength(1);
    expect(found.data.requests[0]).toMatchObject({
      request_id: refusedId,
      token_id: t.tokenId,
      operation: 'agent.list',
      method: 'GET',
      status: 429,
      code: 42900,
      limiter: 'refused',
      policy: 'hourly',
      upstream_status: null,
      reason: 'Rate limit exceeded (policy hourly)',
    });
    expect(found.data.requests[0].trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(found.data.kept).toEqual({ per_kind: RECENT_KEPT, hours: 168 });

    // Filters: by status class, by token, by operation; newest first.
    const ok = await requestsOf(t, '?status=2xx');
    expect(ok.data.requests.map((r: { request_id: string }) => r.request_id)).toEqual([
      ids[1],
      ids[0],
    ]);
    expect(ok.data.requests[0]).toMatchObject({ status: 200, code: 0, limiter: 'admitted' });
    expect((await requestsOf(t, '?status=429')).data.requests).toHaveLength(1);
    expect(
      (await requestsOf(t, `?token_id=${t.tokenId}&operation=agent.list`)).data.requests,
    ).toHaveLength(3);
    expect((await requestsOf(t, '?operation=team.list')).data.requests).toEqual([]);
    const page = await requestsOf(t, '?page_size=1');
    expect(page.data.requests).toHaveLength(1);
    const next = await requestsOf(t, `?page_size=1&cursor=${page.data.cursor}`);
    expect(next.data.requests[0].request_id).not.toBe(page.data.requests[0].request_id);

    // A time range, as the explorer asks it: both ends in, filtered as the list is.
    const at = Date.parse(found.data.requests[0].at);
    const range = (from: number, to: number, more = '') =>
      requestsOf(
        t,
        `?from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}${more}`,
      );
    expect((await range(at, at, '&status=4xx')).data.requests).toHaveLength(1);
    expect((await range(at - 3_600_000, at - 1)).data.requests).toEqual([]);
    expect((await range(at + 1, at + 3_600_000)).data.requests).toEqual([]);
    const backwards = await admin(
      `/tenants/${t.id}/requests?from=${new Date(at).toISOString()}&to=${new Date(at - 1).toISOString()}`,
    );
    expect(backwards.status).toBe(400);
    expect((await envelope(backwards)).data.errors[0]).toMatchObject({
      field: 'to',
      message: 'to must not be before from',
    });
    const badCursor = await admin(`/tenants/${t.id}/requests?cursor=12`);
    expect(badCursor.status).toBe(400);
  });

  it('lets the partner see its own refused and failed requests only, by id, with the reason', async () => {
    const a = await createTenant();
    const b = await createTenant(platformKeys.other);
    await limited(a, 1);
    await limited(b, 1);
    clockHeld();
    const seen: Record<string, string> = {};
    for (const [name, t] of [
      ['a', a],
      ['b', b],
    ] as const) {
      await asTenant(t, '/agent/lists');
      const refused = await asTenant(t, '/agent/lists');
      expect(refused.res.status).toBe(429);
      seen[name] = refused.id;
      // The error envelope hands the partner the id it will look up.
      expect(refused.body.data.request_id).toBe(refused.id);
      pastRefusalLease();
      await asTenant(t, '/agent/lists');
    }
    const own = await asTenant(a, '/usage/requests');
    expect(own.res.status).toBe(200);
    expect(own.res.headers.get('cache-control')).toBe('private, no-store');
    const ids = own.body.data.requests.map((r: { request_id: string }) => r.request_id);
    expect(ids).toContain(seen.a);
    expect(ids).not.toContain(seen.b);
    // Only what was refused or failed: the operator's list has the answered one it leaves out.
    const all = (await requestsOf(a)).data.requests as { status: number }[];
    expect(all.some((r) => r.status === 200)).toBe(true);
    expect(own.body.data.requests.every((r: { status: number }) => r.status >= 400)).toBe(true);
    const byId = await asTenant(
      a,
      `/usage/requests?request_id=${encodeURIComponent(seen.a ?? '')}`,
    );
    expect(byId.body.data.requests).toEqual([
      expect.objectContaining({
        request_id: seen.a,
        status: 429,
        reason: 'Rate limit exceeded (policy hourly)',
      }),
    ]);
    // Another tenant's id finds nothing.
    const other = await asTenant(
      a,
      `/usage/requests?request_id=${encodeURIComponent(seen.b ?? '')}`,
    );
    expect(other.body.data.requests).toEqual([]);
    // Bad filters are refused with the field named; a token without usage:read gets 403.
    const bad = await asTenant(a, '/usage/requests?status=42');
    expect((await expectRefusal(bad, 'VALIDATION_FAILED')).data.errors[0].field).toBe('status');
    const narrow = await envelope(
      await admin(`/tenants/${a.id}/tokens`, {
        method: 'POST',
        body: JSON.stringify({ name: 'narrow', scopes: ['teams:read'] }),
      }),
    );
    await expectRefusal(
      await asTenant({ ...a, token: narrow.data.token }, '/usage/requests'),
      'SCOPE_REQUIRED',
    );
  });

  it('keeps no secret and no query value, and names an unknown path unmatched', async () => {
    const t = await createTenant();
    await limited(t, 1000);
    const secret = `sk-${crypto.randomUUID()}`;
    await asTenant(t, `/user/call/lists?api_key_name=${secret}`);
    await asTenant(t, `/no/such/path?x=${secret}`);
    await asTenant(t, '/agent/lists');
    const rows = await requestsOf(t);
    const text = JSON.stringify(rows);
    for (const hidden of [secret, t.token, platformKeys.demo]) expect(text).not.toContain(hidden);
    expect(rows.data.requests.map((r: { operation: string }) => r.operation)).toEqual([
      'unmatched',
      'calls.list',
    ]);
  });

  it(`keeps the newest ${RECENT_KEPT.toLocaleString('en')} failures apart from the newest ${RECENT_KEPT.toLocaleString('en')} successes`, async () => {
    const t = await createTenant();
    const row = (i: number, status: number): RequestRow => ({
      request_id: `bulk-${status}-${i}`,
      at: Date.now() - 60_000 + i,
      token_id: t.tokenId,
      operation: 'agent.list',
      method: 'GET',
      status,
      code: status === 200 ? 0 : 42900,
      limiter: status === 200 ? 'admitted' : 'refused',
      policy: status === 200 ? null : 'hourly',
      cache: null,
      upstream_status: null,
      upstream_attempts: null,
      latency_ms: 3,
      upstream_ms: null,
      trace_id: null,
    });
    const limits = () => guardFor(testEnv, t.id).limits();
    // 50 failures, then a flood of RECENT_KEPT + 500 successes, 1,000 a batch.
    await limits().record({
      rows: [],
      refusals: [],
      requests: Array.from({ length: 50 }, (_, i) => row(i, 429)),
    });
    const flood = RECENT_KEPT + 500;
    for (let b = 0; b * 1000 < flood; b++) {
      const batch = Array.from({ length: Math.min(1000, flood - b * 1000) }, (_, i) =>
        row(b * 1000 + i, 200),
      );
      await limits().record({ rows: [], refusals: [], requests: batch });
    }
    const failed = await requestsOf(t, '?status=4xx&page_size=200');
    expect(failed.data.requests).toHaveLength(50);
    const found = await requestsOf(t, '?request_id=bulk-429-0');
    expect(found.data.requests).toHaveLength(1);
    let answered = 0;
    let cursor: string | null = '';
    while (cursor !== null) {
      const page: { data: { requests: unknown[]; cursor: string | null } } = await requestsOf(
        t,
        `?status=2xx&page_size=200${cursor ? `&cursor=${cursor}` : ''}`,
      );
      answered += page.data.requests.length;
      cursor = page.data.cursor;
    }
    expect(answered).toBe(RECENT_KEPT);
    expect((await requestsOf(t, '?request_id=bulk-200-499')).data.requests).toEqual([]);
    expect((await requestsOf(t, `?request_id=bulk-200-${flood - 1}`)).data.requests).toHaveLength(
      1,
    );
  }, 60_000);
});

describe('a table from before MCP tool calls', () => {
  it('gains the via column and keeps its rows', async () => {
    const t = await createTenant();
    await limited(t, 100);
    const { id: before } = await asTenant(t, '/agent/lists');
    const guard = guardStub(testEnv, t.id);
    // The table as it was made before issue 44: no via column.
    await runInDurableObject(guard, (_, state) => {
      const sql = state.storage.sql;
      sql.exec('ALTER TABLE recent_requests DROP COLUMN via');
      expect(
        sql
          .exec('PRAGMA table_info(recent_requests)')
          .toArray()
          .map((c) => c.name),
      ).not.toContain('via');
    });
    await evictDurableObject(guard);
    await asTenant(t, '/agent/lists');
    await asTenant(t, '/agent/lists');
    const rows = (await requestsOf(t)).data.requests as { request_id: string; via: unknown }[];
    expect(rows.length).toBeGreaterThanOrEqual(2);
    expect(rows.map((r) => r.via)).toEqual(rows.map(() => null));
    expect(rows.map((r) => r.request_id)).toContain(before);
  });
});

describe('a table from before the explorer', () => {
  it('numbers its rows by kind, keeps them, and answers them by time', async () => {
    const t = await createTenant();
    await limited(t, 100);
    const { id: before } = await asTenant(t, '/agent/lists');
    await asTenant(t, '/agent/lists');
    const guard = guardStub(testEnv, t.id);
    // The table as it was before: no kind's sequence, its index by kind and arrival.
    await runInDurableObject(guard, (_, state) => {
      const sql = state.storage.sql;
      sql.exec(`
        DROP INDEX recent_by_kseq;
        DROP INDEX recent_by_at;
        ALTER TABLE recent_requests DROP COLUMN kseq;
        CREATE INDEX recent_by_kind ON recent_requests (failed, seq);
      `);
    });
    await evictDurableObject(guard);
    await asTenant(t, '/agent/lists');
    await asTenant(t, '/agent/lists');
    const rows = (await requestsOf(t)).data.requests as { request_id: string }[];
    expect(rows.map((r) => r.request_id)).toContain(before);
    await runInDurableObject(guard, (_, state) => {
      const sql = state.storage.sql;
      const indexes = sql
        .exec(
          "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'recent_requests'",
        )
        .toArray()
        .map((r) => r.name);
      expect(indexes).toEqual(expect.arrayContaining(['recent_by_kseq', 'recent_by_at']));
      expect(indexes).not.toContain('recent_by_kind');
      // Every row numbered, in the order it came.
      const kinds = sql.exec('SELECT seq, kseq FROM recent_requests ORDER BY seq').toArray();
      expect(kinds.every((r) => Number(r.kseq) > 0)).toBe(true);
      const numbers = kinds.map((r) => Number(r.kseq));
      expect([...numbers].sort((a, b) => a - b)).toEqual(numbers);
    });
  });
});

describe('refusals by operation', () => {
  it('the partner sees its refusals by policy and by the operation refused', async () => {
    const t = await createTenant();
    await limited(t, 1);
    clockHeld();
    await asTenant(t, '/agent/lists');
    for (let i = 0; i < 2; i++) await asTenant(t, '/agent/lists');
    await asTenant(t, '/team/lists');
    pastRefusalLease();
    await asTenant(t, '/team/lists');
    const { body } = await asTenant(t, '/usage');
    expect(body.data.refusals_by_operation.hours).toEqual([
      { operation: 'agent.list', count: 2 },
      { operation: 'team.list', count: 1 },
    ]);
    expect(body.data.hours.length).toBeGreaterThan(0);
    expect(
      body.data.hourly_refusals.reduce((n: number, r: { count: number }) => n + r.count, 0),
    ).toBe(3);
  });
});
