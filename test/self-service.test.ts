/**
 * Self-service reads (docs/LIMITS.md, "Self-service reads"): GET /token and
 * GET /usage spend none of the tenant's policies or quotas, answer while those
 * are spent, and have a small meter of their own per token
 * (SELF_SERVICE_PER_MINUTE), refused with the usual 429 envelope and
 * RateLimit fields.
 */
import { describe, expect, it } from 'vitest';
import type { Limits } from '../src/metering/policy';
import {
  admin,
  asTenant,
  createTenant,
  envelope,
  expectRefusal,
  gatewayWith,
  secondsHeader,
  type TestTenant,
} from './helpers';

async function setLimits(t: TestTenant, limits: Partial<Limits>) {
  const res = await admin(`/tenants/${t.id}/limits`, {
    method: 'PUT',
    body: JSON.stringify({ policies: [], quota: {}, limiter: 'exact', ...limits }),
  });
  expect(res.status).toBe(200);
}

const quota = (meters: { name: string; used: number; remaining: number }[], name: string) =>
  meters.find((m) => m.name === name);

describe('self-service reads', () => {
  it('answer while the daily quota is spent, and show it spent', async () => {
    const t = await createTenant();
    await setLimits(t, { quota: { daily: 3 } });
    for (let i = 0; i < 3; i++) expect((await asTenant(t, '/team/lists')).res.status).toBe(200);
    await expectRefusal(await asTenant(t, '/team/lists'), 'QUOTA_EXHAUSTED');

    const usage = await asTenant(t, '/usage');
    expect(usage.res.status).toBe(200);
    expect(quota(usage.body.data.meters, 'daily')).toMatchObject({ used: 3, remaining: 0 });
    const me = await asTenant(t, '/token');
    expect(me.res.status).toBe(200);
    expect(quota(me.body.data.meters, 'daily')).toMatchObject({ used: 3, remaining: 0 });
    // Their RateLimit fields are their own meter's, not the spent quota's.
    expect(me.res.headers.get('ratelimit-policy')).toBe('"self-service";q=60;w=60');
  });

  it("spend none of the tenant's quota or rate policies", async () => {
    const t = await createTenant();
    await setLimits(t, {
      policies: [{ name: 'burst', limit: 4, window_s: 3600 }],
      quota: { daily: 4 },
    });
    for (let i = 0; i < 10; i++) {
      expect((await asTenant(t, '/usage')).res.status).toBe(200);
      expect((await asTenant(t, '/token')).res.status).toBe(200);
    }
    const usage = await asTenant(t, '/usage');
    expect(quota(usage.body.data.meters, 'daily')).toMatchObject({ used: 0, remaining: 4 });
    expect(quota(usage.body.data.meters, 'burst')).toMatchObject({ used: 0, remaining: 4 });
    for (let i = 0; i < 4; i++) expect((await asTenant(t, '/team/lists')).res.status).toBe(200);
  });

  it('have their own per-token limit: a flood of GET /token is refused past it', async () => {
    const t = await createTenant();
    const other = await envelope(
      await admin(`/tenants/${t.id}/tokens`, {
        method: 'POST',
        body: JSON.stringify({ name: 'other', scopes: ['read-only'] }),
      }),
    );
    const limited = { SELF_SERVICE_PER_MINUTE: '5' };
    const read = (token: string, path = '/token') =>
      gatewayWith(limited, path, { headers: { authorization: `Bearer ${token}` } });
    // All at once: exactly five of them are answered, whatever the order.
    const flood = await Promise.all(Array.from({ length: 30 }, () => read(t.token)));
    const statuses = flood.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(25);
    const refused = flood.find((r) => r.status === 429);
    if (!refused) throw new Error('no refusal');
    const body = await expectRefusal(refused, 'RATE_LIMITED');
    expect(body.data.policy).toBe('self-service');
    expect(secondsHeader(refused, 'retry-after')).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('ratelimit-policy')).toBe('"self-service";q=5;w=60');
    expect(refused.headers.get('ratelimit')).toMatch(/^"self-service";r=0;t=\d+$/);
    // GET /usage shares the meter; another token of the tenant has its own; the platform
    // routes are untouched.
    await expectRefusal(await read(t.token, '/usage'), 'RATE_LIMITED');
    expect((await read(other.data.token)).status).toBe(200);
    expect(
      (
        await gatewayWith(limited, '/team/lists', {
          headers: { authorization: `Bearer ${t.token}` },
        })
      ).status,
    ).toBe(200);
  });
});
