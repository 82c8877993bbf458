/**
 * Per-tenant limits through the gateway: exactness under concurrency, costs,
 * quotas, RateLimit fields, instant revocation and fail-closed.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { humanDuration } from '../src/duration';
import { ERRORS, type ErrorKind } from '../src/errors';
import type { Limits } from '../src/metering/policy';
import { guardFor } from '../src/objects/tenant/tenant-guard';
import {
  admin,
  asTenant,
  createTenant,
  envelope,
  expectRefusal,
  gateway,
  gatewayWith,
  requestId,
  revokeWhileKvLags,
  secondsHeader,
  type TestTenant,
  testEnv,
  unreachableObjects,
  upstreamSaw,
} from './helpers';

/**
 * Today's exactness tests: exact mode (one TenantGuard call per request) and
 * fixed windows, as before leases and sliding windows (limits-leased.test.ts).
 */
async function setLimits(tenant: TestTenant, limits: Partial<Limits>) {
  const policies = (limits.policies ?? []).map((p) => ({ algorithm: 'fixed', ...p }));
  const res = await admin(`/tenants/${tenant.id}/limits`, {
    method: 'PUT',
    body: JSON.stringify({ quota: {}, limiter: 'exact', ...limits, policies }),
  });
  expect(res.status, JSON.stringify(await res.clone().json())).toBe(200);
}

/**
 * Keeps a burst of requests inside one fixed window (windows align to the
 * epoch): the clock is moved to one second into the next window and held there.
 */
function awayFromWindowEdge(windowS: number) {
  const w = windowS * 1000;
  vi.useFakeTimers({ toFake: ['Date'], now: (Math.floor(Date.now() / w) + 1) * w + 1000 });
}

afterEach(() => vi.useRealTimers());

const SF_POLICY = /^"[a-z0-9_-]+";q=\d+;w=\d+(, "[a-z0-9_-]+";q=\d+;w=\d+)*$/;
const SF_LIMIT = /^"[a-z0-9_-]+";r=\d+;t=\d+(, "[a-z0-9_-]+";r=\d+;t=\d+)*$/;

describe('rate policies', () => {
  it('a partner with burst 5 per 10 s firing 50 at once: exactly 5 reach the platform', async () => {
    const partner = await createTenant(undefined, 'partner');
    await setLimits(partner, { policies: [{ name: 'burst', limit: 5, window_s: 10 }] });
    awayFromWindowEdge(10);

    // An uncached read, so every admitted request is one the platform answers.
    const calls = await Promise.all(
      Array.from({ length: 50 }, () => asTenant(partner, '/agent/lists')),
    );
    const answered = calls.filter((c) => c.res.status === 200);
    const refused = calls.filter((c) => c.res.status === 429);
    expect(answered).toHaveLength(5);
    expect(refused).toHaveLength(45);
    for (const r of refused) {
      expect(r.body.code).toBe(ERRORS.RATE_LIMITED.code);
      expect(r.body.msg).toContain('"burst"');
      expect(r.body.data).toMatchObject({ policy: 'burst', request_id: r.id });
      const retry = secondsHeader(r.res, 'retry-after');
      expect(retry).toBeGreaterThanOrEqual(1);
      expect(retry).toBeLessThanOrEqual(10);
    }
    const reached = await Promise.all(calls.map((c) => upstreamSaw(c.id)));
    expect(reached.flat()).toHaveLength(5);
  });

  it('sends RateLimit-Policy and RateLimit as structured-field lists, counting down', async () => {
    const tenant = await createTenant();
    await setLimits(tenant, {
      policies: [
        { name: 'burst', limit: 20, window_s: 3600 },
        { name: 'sustained', limit: 600, window_s: 7200 },
      ],
      quota: { daily: 1000 },
    });
    const first = await asTenant(tenant, '/team/lists');
    const second = await asTenant(tenant, '/team/lists');
    const policy = first.res.headers.get('ratelimit-policy')!;
    expect(policy).toMatch(SF_POLICY);
    expect(policy).toBe('"burst";q=20;w=3600, "sustained";q=600;w=7200, "daily";q=1000;w=86400');
    expect(first.res.headers.get('ratelimit')).toMatch(SF_LIMIT);
    expect(first.res.headers.get('ratelimit')).toMatch(
      /^"burst";r=19;t=\d+, "sustained";r=599;t=\d+, "daily";r=999;t=\d+$/,
    );
    expect(second.res.headers.get('ratelimit')).toMatch(/^"burst";r=18;/);
  });

  it('carries the fields on upstream errors too', async () => {
    const tenant = await createTenant();
    const { res, id, body } = await asTenant(
      tenant,
      '/team/info/00000000-0000-4000-8000-000000000000',
    );
    // The platform's own "not found" envelope, passed through, not an error of the gateway.
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ code: 10404, msg: 'team not found' });
    expect(await upstreamSaw(id)).toHaveLength(1);
    expect(res.headers.get('ratelimit')).toMatch(SF_LIMIT);
  });

  it('does not count requests refused by validation', async () => {
    const tenant = await createTenant();
    await setLimits(tenant, { policies: [{ name: 'burst', limit: 3, window_s: 3600 }] });
    for (let i = 0; i < 5; i++)
      await expectRefusal(await asTenant(tenant, '/team/lists?page_size=0'), 'VALIDATION_FAILED');
    expect((await asTenant(tenant, '/team/lists')).res.headers.get('ratelimit')).toMatch(/r=2;/);
  });
});

describe('costs', () => {
  it('creating a session costs 5, a read 1', async () => {
    const tenant = await createTenant();
    await setLimits(tenant, { policies: [{ name: 'units', limit: 100, window_s: 3600 }] });
    const team = (await asTenant(tenant, '/team/lists')).body.data.data[0].team_id;
    const created = await asTenant(tenant, '/session/create', {
      method: 'POST',
      json: { team_id: team },
    });
    expect(created.res.headers.get('ratelimit')).toMatch(/^"units";r=94;/);
    const browser = (await asTenant(tenant, `/session/info/${created.body.data.session_id}`)).res;
    expect(browser.headers.get('ratelimit')).toMatch(/^"units";r=93;/);
  });

  it('a request dearer than what remains is refused, a cheaper one still passes', async () => {
    const tenant = await createTenant();
    await setLimits(tenant, { policies: [{ name: 'units', limit: 7, window_s: 3600 }] });
    const team = (await asTenant(tenant, '/team/lists')).body.data.data[0].team_id;
    await asTenant(tenant, '/team/lists');
    await asTenant(tenant, '/team/lists');
    const id = requestId();
    const create = await asTenant(tenant, '/session/create', {
      method: 'POST',
      json: { team_id: team },
      headers: { 'x-request-id': id },
    });
    await expectRefusal(create, 'RATE_LIMITED');
    expect((await asTenant(tenant, '/team/lists')).res.status).toBe(200);
  });

  it('a request dearer than a whole window says so instead of "retry later"', async () => {
    const tenant = await createTenant();
    await setLimits(tenant, { policies: [{ name: 'tiny', limit: 3, window_s: 3600 }] });
    const team = '3f6c1e2a-5b7d-4c8e-9f01-23456789abcd';
    const { res, body } = await asTenant(tenant, '/session/create', {
      method: 'POST',
      json: { team_id: team },
    });
    await expectRefusal({ res, body }, 'RATE_LIMITED');
    expect(body.msg).toContain('costs more than "tiny" allows per window (3)');
    expect(res.headers.get('retry-after')).toBeNull();
  });

  it('ROUTE_OVERRIDES can change a cost', async () => {
    const tenant = await createTenant();
    await setLimits(tenant, { policies: [{ name: 'units', limit: 100, window_s: 3600 }] });
    const res = await gatewayWith(
      { ROUTE_OVERRIDES: '{"team.list": {"cost": 7}}' },
      '/team/lists',
      { headers: { authorization: tenant.token } },
    );
    expect(res.headers.get('ratelimit')).toMatch(/^"units";r=93;/);
  });
});

describe('quotas', () => {
  it('an exhausted daily quota is its own code, with Retry-After until UTC midnight', async () => {
    const tenant = await createTenant();
    await setLimits(tenant, { policies: [], quota: { daily: 3 } });
    for (let i = 0; i < 3; i++)
      expect((await asTenant(tenant, '/team/lists')).res.status).toBe(200);
    const { res, body, id } = await asTenant(tenant, '/team/lists');
    expect(res.status).toBe(429);
    expect(body.code).toBe(ERRORS.QUOTA_EXHAUSTED.code);
    expect(body.data.policy).toBe('daily');
    const now = new Date();
    const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    expect(
      Math.abs(secondsHeader(res, 'retry-after') - (midnight - Date.now()) / 1000),
    ).toBeLessThan(5);
    // The message says the wait in words; the seconds stay in data and the header.
    expect(body.data.retry_after_s).toBe(secondsHeader(res, 'retry-after'));
    expect(body.msg).toBe(
      `Quota "daily" exhausted; retry in ${humanDuration(body.data.retry_after_s)}`,
    );
    expect(body.msg).not.toMatch(/\d{3,} s\b/);
    expect(await upstreamSaw(id)).toEqual([]);
  });

  it('a per-group quota limits only that group', async () => {
    const tenant = await createTenant();
    await setLimits(tenant, { policies: [], quota: { groups: { sessions: { daily: 5 } } } });
    const team = (await asTenant(tenant, '/team/lists')).body.data.data[0].team_id;
    expect(
      (await asTenant(tenant, '/session/create', { method: 'POST', json: { team_id: team } })).res
        .status,
    ).toBe(200);
    const second = await asTenant(tenant, '/session/create', {
      method: 'POST',
      json: { team_id: team },
    });
    await expectRefusal(second, 'QUOTA_EXHAUSTED');
    expect(second.body.data.policy).toBe('sessions-daily');
    expect((await asTenant(tenant, '/team/lists')).res.status).toBe(200);
  });
});

describe('revocation', () => {
  it('a revoked token fails on its very next request, even while isolates still remember it', async () => {
    const tenant = await createTenant();
    await setLimits(tenant, { policies: [] });
    const issued = await envelope(
      await admin(`/tenants/${tenant.id}/tokens`, {
        method: 'POST',
        body: JSON.stringify({ name: 'second' }),
      }),
    );
    const second = issued.data.token as string;
    const remember = { TENANT_MEMO_TTL_MS: '60000' };
    const call = (token: string) =>
      gatewayWith(remember, '/team/lists', { headers: { authorization: token } });
    expect((await call(tenant.token)).status).toBe(200);

    // What another isolate sees right after a revocation: KV still has the
    // token (deletion not yet propagated), only the TenantGuard knows.
    await revokeWhileKvLags(tenant.id, tenant.token, tenant.tokenId);

    const res = await call(tenant.token);
    expect(res.status).toBe(401);
    expect((await envelope(res)).code).toBe(ERRORS.TOKEN_REVOKED.code);
    expect((await call(second)).status).toBe(200);
  });

  it('the operator endpoint revokes: 401 on the next request', async () => {
    const tenant = await createTenant();
    expect((await asTenant(tenant, '/team/lists')).res.status).toBe(200);
    expect(
      (await admin(`/tenants/${tenant.id}/tokens/${tenant.tokenId}`, { method: 'DELETE' })).status,
    ).toBe(200);
    const { res, body } = await asTenant(tenant, '/team/lists');
    expect(res.status).toBe(401);
    expect([ERRORS.TOKEN_REVOKED.code, ERRORS.INVALID_TOKEN.code]).toContain(body.code);
  });

  it('lists tokens without their secrets, and 404s an unknown token', async () => {
    const tenant = await createTenant();
    const listed = await envelope(await admin(`/tenants/${tenant.id}/tokens`));
    expect(listed.data.tokens).toEqual([
      expect.objectContaining({
        id: tenant.tokenId,
        prefix: tenant.token.slice(0, 9),
        last4: tenant.token.slice(-4),
      }),
    ]);
    expect(JSON.stringify(listed)).not.toContain(tenant.token);
    const res = await admin(`/tenants/${tenant.id}/tokens/tok_0000000000000000`, {
      method: 'DELETE',
    });
    await expectRefusal(res, 'RESOURCE_NOT_FOUND');
  });
});

describe('when the limiter cannot be reached', () => {
  // A namespace whose objects cannot be reached, as during an outage.
  const unreachable = unreachableObjects(
    'Durable Object reset because its code was updated.',
  ) as typeof testEnv.TENANT_GUARD;
  // The regional brokers are down with it (the broker path is tested in limits-fleet).
  const unreachableBroker = unreachable as unknown as typeof testEnv.LEASE_BROKER;

  it('fails closed by default: 503, nothing forwarded', async () => {
    const tenant = await createTenant();
    const id = requestId();
    const res = await gatewayWith(
      { TENANT_GUARD: unreachable, LEASE_BROKER: unreachableBroker },
      '/team/lists',
      {
        headers: { authorization: tenant.token, 'x-request-id': id },
      },
    );
    expect(res.status).toBe(503);
    expect((await envelope(res)).code).toBe(ERRORS.LIMITER_UNAVAILABLE.code);
    expect(await upstreamSaw(id)).toEqual([]);
  });

  it('fails open when LIMITER_FAILURE_MODE=open', async () => {
    const tenant = await createTenant();
    const res = await gatewayWith(
      { TENANT_GUARD: unreachable, LEASE_BROKER: unreachableBroker, LIMITER_FAILURE_MODE: 'open' },
      '/team/lists',
      { headers: { authorization: tenant.token } },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit')).toBeNull();
  });
});

describe('operator limits API', () => {
  it.each([
    ['a reserved name', { policies: [{ name: 'daily', limit: 1, window_s: 1 }] }, 'reserved'],
    [
      'duplicate names',
      {
        policies: [
          { name: 'a', limit: 1, window_s: 1 },
          { name: 'a', limit: 2, window_s: 2 },
        ],
      },
      'unique',
    ],
    ['a zero limit', { policies: [{ name: 'a', limit: 0, window_s: 1 }] }, 'policies.0.limit'],
    [
      'an unknown group',
      { policies: [], quota: { groups: { widgets: { daily: 1 } } } },
      'quota.groups',
      'UNKNOWN_PARAMETER',
    ],
  ])('refuses %s', async (_, limits, says, kind = 'VALIDATION_FAILED') => {
    const tenant = await createTenant();
    const res = await admin(`/tenants/${tenant.id}/limits`, {
      method: 'PUT',
      body: JSON.stringify(limits),
    });
    expect(JSON.stringify(await expectRefusal(res, kind as ErrorKind))).toContain(says);
  });

  it('shows usage: counters and what remains', async () => {
    const tenant = await createTenant();
    await setLimits(tenant, {
      policies: [{ name: 'burst', limit: 10, window_s: 3600 }],
      quota: { daily: 50, monthly: 500 },
    });
    await asTenant(tenant, '/team/lists');
    await asTenant(tenant, '/team/lists');
    const usage = await envelope(await admin(`/tenants/${tenant.id}/usage`));
    expect(usage.data.custom).toBe(true);
    expect(usage.data.meters).toEqual([
      expect.objectContaining({ name: 'burst', used: 2, remaining: 8, limit: 10 }),
      expect.objectContaining({ name: 'daily', used: 2, remaining: 48 }),
      expect.objectContaining({ name: 'monthly', used: 2, remaining: 498 }),
    ]);
  });

  it('DELETE returns a tenant to the default limits', async () => {
    const tenant = await createTenant();
    await setLimits(tenant, { policies: [{ name: 'tiny', limit: 1, window_s: 3600 }] });
    await admin(`/tenants/${tenant.id}/limits`, { method: 'DELETE' });
    const usage = await envelope(await admin(`/tenants/${tenant.id}/usage`));
    expect(usage.data.custom).toBe(false);
    expect(usage.data.limits.policies[0].name).toBe('burst');
  });

  it('is behind the admin token', async () => {
    const res = await gateway('/admin/tenants/ten_0000000000000000/usage');
    await expectRefusal(res, 'ADMIN_UNAUTHORIZED');
  });
});

describe('a route that costs 0 units (ROUTE_OVERRIDES)', () => {
  const free = (mode: 'closed' | 'open') => ({
    ROUTE_OVERRIDES: JSON.stringify({ 'team.list': { cost: 0 } }),
    LIMITER_FAILURE_MODE: mode,
    TENANT_MEMO_TTL_MS: '60000',
  });
  const call = (token: string, mode: 'closed' | 'open' = 'closed') =>
    gatewayWith(free(mode), '/team/lists', { headers: { authorization: token } });

  it('is answered on every request of an exact-mode tenant, failing closed, and counts nothing', async () => {
    const tenant = await createTenant();
    await setLimits(tenant, { policies: [{ name: 'burst', limit: 1, window_s: 3600 }] });
    for (let i = 0; i < 6; i++) {
      const res = await call(tenant.token);
      expect(res.status, `request ${i + 1}`).toBe(200);
      expect((await envelope(res)).code).toBe(0);
    }
    // Nothing was counted: the one unit of the window is still there for a paid call.
    const usage = await envelope(await admin(`/tenants/${tenant.id}/usage`));
    expect(usage.data.meters).toContainEqual(expect.objectContaining({ name: 'burst', used: 0 }));
  });

  // Exact mode: every request asks the guard, as every leased one does once its lease ends.
  it('is refused once its token is revoked, or its tenant disabled, in either failure mode', async () => {
    for (const mode of ['closed', 'open'] as const) {
      const tenant = await createTenant();
      await setLimits(tenant, { policies: [] });
      expect((await call(tenant.token, mode)).status).toBe(200);
      await revokeWhileKvLags(tenant.id, tenant.token, tenant.tokenId);
      const revoked = await call(tenant.token, mode);
      expect(revoked.status, mode).toBe(401);
      expect((await envelope(revoked)).code).toBe(ERRORS.TOKEN_REVOKED.code);

      const other = await createTenant();
      await setLimits(other, { policies: [] });
      expect((await call(other.token, mode)).status).toBe(200);
      await guardFor(testEnv, other.id).tenantRecord().setDisabled(true);
      const disabled = await call(other.token, mode);
      expect(disabled.status, mode).toBe(403);
      expect((await envelope(disabled)).code).toBe(ERRORS.TENANT_DISABLED.code);
    }
  });
});
