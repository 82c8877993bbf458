/**
 * Observability: the request log line, Analytics Engine points, usage history
 * (rollups, retention, restarts), the operator's analytics API and CSV export,
 * and a tenant's own view.
 */
import { evictDurableObject, runDurableObjectAlarm } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ERRORS } from '../src/errors';
import { guardFor, guardStub } from '../src/objects/tenant/tenant-guard';
import {
  ADMIN_TOKEN,
  admin,
  asTenant,
  createTenant,
  envelope,
  expectRefusal,
  gateway,
  gatewayWith,
  injectFault,
  platformKeys,
  requestId,
  type TestTenant,
  tenantWithOwnKey,
  testEnv,
} from './helpers';

afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

/** Every `request` log line written while `run` runs, parsed. */
async function requestLines(run: () => Promise<void>): Promise<Record<string, unknown>[]> {
  const lines: string[] = [];
  for (const level of ['log', 'info', 'warn', 'error'] as const) {
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
      lines.push(args.map(String).join(' '));
    });
  }
  await run();
  vi.restoreAllMocks();
  return lines.flatMap((l) => {
    try {
      const parsed = JSON.parse(l);
      return parsed.event === 'request' ? [parsed] : [];
    } catch {
      return [];
    }
  });
}

const FIELDS = [
  'request_id',
  'trace_id',
  'tenant_id',
  'token_id',
  'route',
  'method',
  'status',
  'code',
  'upstream_status',
  'cache',
  'stale_reason',
  'upstream_attempts',
  'idempotency',
  'limiter',
  'cost',
  'duration_ms',
  'upstream_ms',
  'colo',
  'via',
  'tool',
];

describe('request log', () => {
  it('writes one line per request with every field, for successes, refusals, 404s, upstream failures and unauthenticated calls, and no secret', async () => {
    const t = await createTenant(platformKeys.demo, 'logged');
    const limited = await createTenant(platformKeys.demo, 'limited');
    await admin(`/tenants/${limited.id}/limits`, {
      method: 'PUT',
      body: JSON.stringify({ policies: [{ name: 'tiny', limit: 1, window_s: 3600 }] }),
    });
    const ids = {
      ok: requestId('ok'),
      refused: requestId('refused'),
      missing: requestId('missing'),
      failed: requestId('failed'),
      anonymous: requestId('anon'),
    };
    // Twice: the read is retried once.
    await injectFault({ request_id: ids.failed, kind: 'status', status: 503, times: 2 });
    const lines = await requestLines(async () => {
      await asTenant(t, '/team/lists', { headers: { 'x-request-id': ids.ok } });
      await asTenant(limited, '/agent/lists');
      await asTenant(limited, '/agent/lists', { headers: { 'x-request-id': ids.refused } });
      await gateway('/nowhere', { headers: { 'x-request-id': ids.missing } });
      await asTenant(t, '/agent/lists', { headers: { 'x-request-id': ids.failed } });
      await gateway('/team/lists', { headers: { 'x-request-id': ids.anonymous } });
    });
    const line = (id: string) => lines.find((l) => l.request_id === id);
    for (const id of Object.values(ids))
      expect(Object.keys(line(id) ?? {}).sort()).toEqual([...FIELDS, 'event', 'level'].sort());
    expect(line(ids.ok)).toMatchObject({
      tenant_id: t.id,
      token_id: t.tokenId,
      route: 'team.list',
      method: 'GET',
      status: 200,
      code: 0,
      upstream_status: 200,
      cache: 'MISS',
      limiter: 'admitted',
      cost: 1,
    });
    expect(line(ids.refused)).toMatchObject({
      tenant_id: limited.id,
      route: 'agent.list',
      status: 429,
      code: ERRORS.RATE_LIMITED.code,
      limiter: 'refused:tiny',
      upstream_status: null,
    });
    expect(line(ids.missing)).toMatchObject({
      status: 404,
      code: ERRORS.NOT_FOUND.code,
      tenant_id: null,
    });
    expect(line(ids.failed)).toMatchObject({
      status: 502,
      code: ERRORS.UPSTREAM_HTTP_ERROR.code,
      upstream_status: 503,
      upstream_attempts: 2,
      route: 'agent.list',
    });
    expect(line(ids.anonymous)).toMatchObject({
      status: 401,
      code: ERRORS.MISSING_TOKEN.code,
      tenant_id: null,
      token_id: null,
      route: 'team.list',
    });
    const all = JSON.stringify(lines);
    for (const secret of [t.token, limited.token, platformKeys.demo, ADMIN_TOKEN])
      expect(all).not.toContain(secret);
  });

  it('samples successes by LOG_SAMPLE_RATE but always logs errors', async () => {
    const t = await createTenant();
    const lines = await requestLines(async () => {
      for (let i = 0; i < 5; i++) {
        await gatewayWith({ LOG_SAMPLE_RATE: '0' }, '/agent/lists', {
          headers: { authorization: t.token },
        });
      }
      await gatewayWith({ LOG_SAMPLE_RATE: '0' }, '/agent/lists?page_size=0', {
        headers: { authorization: t.token },
      });
    });
    expect(lines.map((l) => l.status)).toEqual([400]);
  });

  it("tells the operation's own platform call, not the read its check made before it", async () => {
    // A key of its own: calls.list's status check reads calls.filter_values from the platform.
    const t = await tenantWithOwnKey('checked');
    const id = requestId('checked');
    // Only the operation's own call fails (twice: a read is retried once).
    await injectFault({
      request_id: id,
      path: '/user/call/lists',
      kind: 'status',
      status: 503,
      times: 2,
    });
    const lines = await requestLines(async () => {
      await asTenant(t, '/user/call/lists?status=success', { headers: { 'x-request-id': id } });
    });
    expect(lines.find((l) => l.request_id === id)).toMatchObject({
      route: 'calls.list',
      status: 502,
      code: ERRORS.UPSTREAM_HTTP_ERROR.code,
      upstream_status: 503,
      upstream_attempts: 2,
      cache: null,
    });
  });
});

describe('Analytics Engine', () => {
  it('writes one point per request with the documented layout when the binding is there', async () => {
    const t = await createTenant();
    const points: AnalyticsEngineDataPoint[] = [];
    const ANALYTICS = { writeDataPoint: (p: AnalyticsEngineDataPoint) => points.push(p) };
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const res = await gatewayWith({ ANALYTICS }, '/agent/lists', {
      headers: { authorization: t.token, traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    expect(res.status).toBe(200);
    expect(points).toHaveLength(1);
    const [point] = points;
    expect(point?.indexes).toEqual([t.id]);
    expect(point?.blobs).toEqual(['agent.list', '2xx', '0', 'BYPASS', t.tokenId, traceId]);
    expect(point?.doubles).toHaveLength(4);
    const [duration, upstream, cost, bytes] = point?.doubles ?? [];
    expect(duration).toBeGreaterThanOrEqual(0);
    expect(upstream).toBeGreaterThanOrEqual(0);
    expect(cost).toBe(1);
    expect(bytes).toBe((await res.arrayBuffer()).byteLength);
  });

  it('without the binding, requests work as before', async () => {
    const t = await createTenant();
    expect(testEnv.ANALYTICS).toBeUndefined();
    expect((await asTenant(t, '/team/lists')).res.status).toBe(200);
  });
});

/** Moves the clock on so the isolate's usage batch is due, then asks until the history shows `want`. */
async function flushedHistory(t: TestTenant, query: string, want: (data: any) => boolean) {
  vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 11_000 });
  // A request after the batch is due hands it to the guard, off its own path.
  await asTenant(t, '/agent/lists');
  for (let i = 0; i < 50; i++) {
    const res = await envelope(await admin(`/tenants/${t.id}/analytics?${query}`));
    if (want(res.data)) return res.data;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('usage history never showed what was expected');
}

describe('usage history', () => {
  it('counts exactly the requests made, per hour, route, status class and token', async () => {
    const t = await createTenant();
    const second = await envelope(
      await admin(`/tenants/${t.id}/tokens`, {
        method: 'POST',
        body: JSON.stringify({ name: 'second' }),
      }),
    );
    const other = { ...t, token: second.data.token as string, tokenId: second.data.id as string };
    for (let i = 0; i < 3; i++) await asTenant(t, '/team/lists');
    for (let i = 0; i < 2; i++) await asTenant(other, '/agent/lists?page_size=0');
    await asTenant(other, '/team/lists');
    const data = await flushedHistory(t, 'granularity=hour&group_by=route,status,token', (d) =>
      d.series.some(
        (p: { route: string; token: string }) =>
          p.route === 'team.list' && p.token === other.tokenId,
      ),
    );
    const rows = data.series.map((p: Record<string, unknown>) => [
      p.route,
      p.status,
      p.token,
      p.requests,
      p.units,
    ]);
    expect(rows).toEqual(
      expect.arrayContaining([
        ['team.list', '2xx', t.tokenId, 3, 3],
        ['agent.list', '4xx', other.tokenId, 2, 0],
        ['team.list', '2xx', other.tokenId, 1, 1],
      ]),
    );
    for (const p of data.series) {
      expect(p.t).toBe(new Date(Math.floor(Date.parse(p.t) / 3_600_000) * 3_600_000).toISOString());
      expect(p.p50_ms === null || p.p50_ms >= 0).toBe(true);
    }
    // It survives the TenantGuard being evicted and started again.
    await evictDurableObject(testEnv.TENANT_GUARD.get(testEnv.TENANT_GUARD.idFromName(t.id)));
    const again = await envelope(
      await admin(`/tenants/${t.id}/analytics?granularity=hour&group_by=route,status,token`),
    );
    expect(again.data.series).toEqual(data.series);
  });

  it('counts cached reads that the read cache answered, apart from the ones it did not', async () => {
    const t = await createTenant();
    for (let i = 0; i < 3; i++) await asTenant(t, '/team/lists?page_num=1');
    // no-store reads skip the cache: they are not lookups.
    await asTenant(t, '/team/lists?page_num=1', { headers: { 'cache-control': 'no-store' } });
    await asTenant(t, '/agent/lists');
    const data = await flushedHistory(t, 'granularity=hour&group_by=route', (d) =>
      d.series.some((p: { route: string }) => p.route === 'team.list'),
    );
    const team = data.series.find((p: { route: string }) => p.route === 'team.list');
    expect(team.requests).toBe(4);
    expect(team.cache_lookups).toBe(3);
    // The first may be a miss; the next two come from this isolate's memory.
    expect(team.cache_hits).toBeGreaterThanOrEqual(2);
    expect(team.cache_hits).toBeLessThanOrEqual(3);
    const agent = data.series.find((p: { route: string }) => p.route === 'agent.list');
    expect(agent.cache_lookups).toBe(0);
    expect(agent.cache_hits).toBe(0);
  });

  it('keeps refusals by policy', async () => {
    const t = await createTenant();
    await admin(`/tenants/${t.id}/limits`, {
      method: 'PUT',
      body: JSON.stringify({
        policies: [{ name: 'tiny', limit: 1, window_s: 3600 }],
        limiter: 'exact',
      }),
    });
    for (let i = 0; i < 3; i++) await asTenant(t, '/team/lists');
    const data = await flushedHistory(t, 'granularity=day', (d) => d.refusals.length > 0);
    expect(data.refusals).toEqual([
      expect.objectContaining({ policy: 'tiny', count: expect.any(Number) }),
    ]);
    expect(data.refusals[0].count).toBeGreaterThanOrEqual(2);
  });

  it('drops what is older than the retention', async () => {
    const name = `retention-${crypto.randomUUID()}`;
    const guard = guardStub(testEnv, name);
    const hour = (daysAgo: number) =>
      Math.floor((Date.now() - daysAgo * 86_400_000) / 3_600_000) * 3_600_000;
    const row = (daysAgo: number) => ({
      hour: hour(daysAgo),
      tokenId: 'tok_x',
      route: 'team.list',
      status: '2xx' as const,
      requests: 1,
      units: 1,
      latency: [1],
    });
    await guardFor(testEnv, name)
      .limits()
      .record({ rows: [row(1), row(10), row(40)], refusals: [] }, 30);
    expect(await runDurableObjectAlarm(guard)).toBe(true);
    const kept = await guardFor(testEnv, name)
      .history()
      .query({
        from: hour(60),
        to: Date.now(),
        granularity: 'day',
        groupBy: [],
      });
    expect(kept.series.map((p) => p.requests)).toEqual([1, 1]);
  });
});

describe('operator analytics API', () => {
  it('exports CSV for billing', async () => {
    const t = await createTenant();
    await asTenant(t, '/team/lists');
    await flushedHistory(t, 'granularity=day', (d) => d.series.length > 0);
    const res = await admin(`/tenants/${t.id}/analytics?granularity=day&group_by=route`, {
      headers: { accept: 'text/csv' },
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    const [header, ...rows] = (await res.text()).trim().split('\n');
    expect(header).toBe(
      't,route,requests,units,p50_ms,p95_ms,cache_hits,cache_lookups,billable,self_service',
    );
    expect(rows.some((r) => /^\d{4}-\d{2}-\d{2}T00:00:00\.000Z,team\.list,\d+,\d+,/.test(r))).toBe(
      true,
    );
  });

  it.each([
    ['from after to', 'from=2026-11-10&to=2026-11-01', 'from'],
    ['a range over 90 days', 'from=2026-01-01&to=2026-11-01', 'from'],
    ['an unknown group', 'group_by=route,colour', 'group_by'],
    ['an unknown granularity', 'granularity=week', 'granularity'],
    ['a date that is none', 'from=yesterday', 'from'],
  ])('refuses %s', async (_, query, field) => {
    const t = await createTenant();
    const res = await admin(`/tenants/${t.id}/analytics?${query}`);
    expect(res.status).toBe(400);
    const body = await envelope(res);
    expect(body.code).toBe(ERRORS.VALIDATION_FAILED.code);
    expect(body.data.errors[0].field).toBe(field);
  });
});

describe("a tenant's own view: GET /usage", () => {
  it('shows its limits, current windows and days, and only its own tenant', async () => {
    const t = await createTenant();
    const stranger = await createTenant(platformKeys.other, 'stranger');
    await asTenant(stranger, '/team/lists');
    await asTenant(t, '/team/lists');
    const { res, body } = await asTenant(t, '/usage');
    expect(res.status).toBe(200);
    expect(body.data.tenant_id).toBe(t.id);
    expect(body.data.limits.policies[0].name).toBe('burst');
    expect(body.data.meters[0]).toMatchObject({ name: 'burst', limit: expect.any(Number) });
    expect(Array.isArray(body.data.days)).toBe(true);
    expect(JSON.stringify(body)).not.toContain(stranger.id);
    expect(body.data).not.toHaveProperty('guard_calls');
  });

  it('needs usage:read', async () => {
    const t = await createTenant();
    const narrow = await envelope(
      await admin(`/tenants/${t.id}/tokens`, {
        method: 'POST',
        body: JSON.stringify({ name: 'narrow', scopes: ['teams:read'] }),
      }),
    );
    const { res, body } = await asTenant({ ...t, token: narrow.data.token }, '/usage');
    await expectRefusal({ res, body }, 'SCOPE_REQUIRED');
    expect(body.data.scope).toBe('usage:read');
  });
});
