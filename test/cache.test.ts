/**
 * The read cache through the gateway, with the real Cache API: hits, misses,
 * normalized keys, isolation between platform keys, errors never stored,
 * coalescing, revalidation, purge, limits on hits, and calls.list's status check.
 */
import { describe, expect, it } from 'vitest';
import { ERRORS } from '../src/errors';
import {
  admin,
  asTenant,
  createTenant,
  expectRefusal,
  gatewayWith,
  injectFault,
  platformKeys,
  requestId,
  secondsHeader,
  tenantWithOwnKey,
  upstreamSaw,
} from './helpers';

const names = (body: { data: { data: { name: string }[] } }) => body.data.data.map((t) => t.name);

describe('read cache', () => {
  it('answers a second read within the TTL without an upstream call', async () => {
    const t = await tenantWithOwnKey();
    const first = await asTenant(t, '/team/lists');
    const second = await asTenant(t, '/team/lists');
    expect(first.res.headers.get('x-cache')).toBe('MISS');
    expect(first.res.headers.get('age')).toBe('0');
    expect(second.res.headers.get('x-cache')).toBe('HIT');
    expect(secondsHeader(second.res, 'age')).toBeLessThan(60);
    expect(second.body).toEqual(first.body);
    expect(await upstreamSaw(first.id)).toHaveLength(1);
    expect(await upstreamSaw(second.id)).toHaveLength(0);
  });

  it('normalizes the key: defaults applied, parameters in any order', async () => {
    const t = await tenantWithOwnKey();
    expect((await asTenant(t, '/team/lists')).res.headers.get('x-cache')).toBe('MISS');
    expect((await asTenant(t, '/team/lists?page_size=10')).res.headers.get('x-cache')).toBe('HIT');
    expect(
      (await asTenant(t, '/team/lists?page_size=10&page_num=1')).res.headers.get('x-cache'),
    ).toBe('HIT');
    expect(
      (await asTenant(t, '/team/lists?page_num=1&page_size=10')).res.headers.get('x-cache'),
    ).toBe('HIT');
    expect((await asTenant(t, '/team/lists?page_size=5')).res.headers.get('x-cache')).toBe('MISS');
  });

  it('caches team info and filter values too', async () => {
    const t = await tenantWithOwnKey();
    const team = (await asTenant(t, '/team/lists')).body.data.data[0].team_id;
    for (const path of [`/team/info/${team}`, '/user/call/filter_values']) {
      expect((await asTenant(t, path)).res.headers.get('x-cache'), path).toBe('MISS');
      expect((await asTenant(t, path)).res.headers.get('x-cache'), path).toBe('HIT');
    }
  });

  it('never serves one platform key’s data to another, interleaved', async () => {
    const demo = await tenantWithOwnKey();
    const other = await createTenant(platformKeys.other, 'other account');
    await asTenant(other, '/team/lists', { headers: { 'cache-control': 'no-cache' } });
    for (let round = 0; round < 3; round++) {
      const a = await asTenant(demo, '/team/lists');
      const b = await asTenant(other, '/team/lists');
      // Each list has teams, all of its own account's.
      expect(names(a.body).length).toBeGreaterThan(0);
      expect(names(b.body).length).toBeGreaterThan(0);
      expect(names(a.body).every((n) => n.startsWith('Demo:'))).toBe(true);
      expect(names(b.body).every((n) => n.startsWith('Other:'))).toBe(true);
      if (round > 0) {
        expect(a.res.headers.get('x-cache')).toBe('HIT');
        expect(b.res.headers.get('x-cache')).toBe('HIT');
      }
    }
  });

  it('lets tenants that share a platform key share entries', async () => {
    const first = await tenantWithOwnKey();
    const second = await createTenant(first.platformKey, 'same key');
    expect((await asTenant(first, '/team/lists')).res.headers.get('x-cache')).toBe('MISS');
    expect((await asTenant(second, '/team/lists')).res.headers.get('x-cache')).toBe('HIT');
  });

  it('never stores errors', async () => {
    const t = await tenantWithOwnKey();
    // The platform's own error envelope (passed through, HTTP 200) and an HTTP error (a 502 of
    // ours); a 503 fails twice: the read's one retry must fail too.
    for (const [fault, status, code] of [
      [{ kind: 'platform_error' }, 200, 20001],
      [{ kind: 'status', status: 503, times: 2 }, 502, ERRORS.UPSTREAM_HTTP_ERROR.code],
    ] as const) {
      const id = requestId('nostore');
      await injectFault({ request_id: id, ...fault });
      const failed = await asTenant(t, '/team/lists', { headers: { 'x-request-id': id } });
      expect([failed.res.status, failed.body.code]).toEqual([status, code]);
      const next = await asTenant(t, '/team/lists');
      expect(next.res.headers.get('x-cache')).toBe('MISS');
      expect(next.body.code).toBe(0);
      await admin(`/tenants/${t.id}/cache/purge`, { method: 'POST' });
    }
  });

  it('makes one upstream call for concurrent misses', async () => {
    const t = await tenantWithOwnKey();
    const id = requestId('coalesce');
    // The first upstream call is held for 300 ms, so the others arrive while it is in flight.
    await injectFault({ request_id: id, kind: 'hang', delay_ms: 300 });
    const calls = await Promise.all(
      Array.from({ length: 10 }, () =>
        asTenant(t, '/team/lists', { headers: { 'x-request-id': id } }),
      ),
    );
    expect(calls.every((c) => c.body.code === 0)).toBe(true);
    expect(await upstreamSaw(id)).toHaveLength(1);
  });

  it("ttl_s 0 in ROUTE_OVERRIDES turns a route's cache off", async () => {
    const t = await tenantWithOwnKey();
    const off = {
      ROUTE_OVERRIDES: JSON.stringify({ 'team.list': { cache: { ttl_s: 0, grace_s: 0 } } }),
    };
    for (let i = 0; i < 2; i++) {
      const id = requestId('nocache');
      const res = await gatewayWith(off, '/team/lists', {
        headers: { authorization: t.token, 'x-request-id': id },
      });
      expect(res.headers.get('x-cache')).toBe('BYPASS');
      expect(await upstreamSaw(id)).toHaveLength(1);
    }
  });

  it('revalidates on Cache-Control: no-cache and bypasses on no-store', async () => {
    const t = await tenantWithOwnKey();
    await asTenant(t, '/team/lists');
    const revalidated = await asTenant(t, '/team/lists', {
      headers: { 'cache-control': 'no-cache' },
    });
    expect(revalidated.res.headers.get('x-cache')).toBe('MISS');
    expect(await upstreamSaw(revalidated.id)).toHaveLength(1);
    const bypassed = await asTenant(t, '/team/lists', { headers: { 'cache-control': 'no-store' } });
    expect(bypassed.res.headers.get('x-cache')).toBe('BYPASS');
    expect(await upstreamSaw(bypassed.id)).toHaveLength(1);
  });

  it('still applies rate limits to hits, with fresh RateLimit fields', async () => {
    const t = await tenantWithOwnKey();
    await admin(`/tenants/${t.id}/limits`, {
      method: 'PUT',
      body: JSON.stringify({ policies: [{ name: 'burst', limit: 3, window_s: 3600 }] }),
    });
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await asTenant(t, '/team/lists'));
    expect(results.map((r) => r.res.headers.get('x-cache'))).toEqual(['MISS', 'HIT', 'HIT', null]);
    expect(results.map((r) => r.res.headers.get('ratelimit'))).toEqual([
      expect.stringMatching(/^"burst";r=2;/),
      expect.stringMatching(/^"burst";r=1;/),
      expect.stringMatching(/^"burst";r=0;/),
      expect.stringMatching(/^"burst";r=0;/),
    ]);
    await expectRefusal(results[3]!, 'RATE_LIMITED');
  });

  it('purge drops every entry the platform key can see, for every tenant sharing it', async () => {
    const t = await tenantWithOwnKey();
    const sharer = await createTenant(t.platformKey, 'sharer');
    await asTenant(t, '/team/lists');
    expect((await asTenant(sharer, '/team/lists')).res.headers.get('x-cache')).toBe('HIT');
    const purge = await admin(`/tenants/${t.id}/cache/purge`, { method: 'POST' });
    expect(purge.status).toBe(200);
    expect((await asTenant(t, '/team/lists')).res.headers.get('x-cache')).toBe('MISS');
    expect((await asTenant(sharer, '/team/lists')).res.headers.get('x-cache')).toBe('HIT');
  });

  it('bypasses the cache when the limiter is off (no cache version to purge by)', async () => {
    const t = await tenantWithOwnKey();
    const { gatewayWith } = await import('./helpers');
    const res = await gatewayWith({ LIMITS_ENABLED: 'false' }, '/team/lists', {
      headers: { authorization: t.token },
    });
    expect(res.headers.get('x-cache')).toBe('BYPASS');
  });
});

describe('calls.list status against calls.filter_values states', () => {
  it('accepts a state the platform lists, reading the states through the cache', async () => {
    const t = await tenantWithOwnKey();
    const first = await asTenant(t, '/user/call/lists?status=success');
    expect(first.res.status).toBe(200);
    expect((await upstreamSaw(first.id)).map((r) => r.path)).toEqual([
      '/user/call/filter_values',
      '/user/call/lists',
    ]);
    const second = await asTenant(t, '/user/call/lists?status=failed');
    expect((await upstreamSaw(second.id)).map((r) => r.path)).toEqual(['/user/call/lists']);
  });

  it('refuses an unknown status with a 400 that lists the allowed values', async () => {
    const t = await tenantWithOwnKey();
    const { res, body, id } = await asTenant(t, '/user/call/lists?status=exploded');
    expect(res.status).toBe(400);
    expect(body.code).toBe(ERRORS.VALIDATION_FAILED.code);
    expect(body.msg).toBe('status must be one of success, failed, running, cancelled');
    expect(body.data.errors[0].allowed).toEqual(['success', 'failed', 'running', 'cancelled']);
    expect((await upstreamSaw(id)).map((r) => r.path)).not.toContain('/user/call/lists');
  });
});
