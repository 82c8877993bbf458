/**
 * Leased limits through the gateway (the default mode): exact under
 * concurrency near a limit, sliding windows, per-token limits, changes that
 * reach an isolate within the lease time (injected time) and at once where
 * they were made, the failure modes, and how few TenantGuard calls a busy
 * tenant makes.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ERRORS } from '../src/errors';
import type { Limits } from '../src/metering/policy';
import { guardFor } from '../src/objects/tenant/tenant-guard';
import { loadSettings } from '../src/settings';
import {
  admin,
  asTenant,
  createTenant,
  envelope,
  expectRefusal,
  gatewayWith,
  platformKeys,
  requestId,
  revokeWhileKvLags,
  secondsHeader,
  type TestTenant,
  testEnv,
  unreachableObjects,
  upstreamSaw,
} from './helpers';

/** The tests' setting, as the gateway reads it (not a copy of its default). */
const { LEASE_MAX_MS } = loadSettings(testEnv);

async function setLimits(tenant: TestTenant, limits: Partial<Limits>) {
  const res = await admin(`/tenants/${tenant.id}/limits`, {
    method: 'PUT',
    body: JSON.stringify({ policies: [], quota: {}, ...limits }),
  });
  expect(res.status, JSON.stringify(await res.clone().json())).toBe(200);
}

/** Holds the clock (Date only; timers run) at `at`, or moves it on by `ms`. */
const clockAt = (at: number) => vi.useFakeTimers({ toFake: ['Date'], now: at });
const later = (ms: number) => vi.setSystemTime(Date.now() + ms);
/**
 * The clock just past a whole second: the start of a slot of the test's default 10 s
 * window (slots of 500 ms), so a lease taken now is not cut to a few ms by the slot's
 * end (the clock stands still, and a broker's pool that late in a slot is a few units).
 */
const clockAtSlotStart = () => clockAt(Math.ceil(Date.now() / 1000) * 1000 + 1);

/**
 * A few requests, so this isolate holds a lease with units to spare. Each waits for its
 * background work too: a renewal still in flight when a test moves the clock on would
 * be answered after the jump, with a lease that holds from then.
 */
async function warm(t: TestTenant, n = 4) {
  const init = { headers: { authorization: `Bearer ${t.token}` } };
  for (let i = 0; i < n; i++)
    expect((await gatewayWith({}, '/agent/lists', init)).status).toBe(200);
}

afterEach(() => vi.useRealTimers());

describe('leased limits', () => {
  it('50 concurrent requests against burst 5: exactly 5 reach the platform', async () => {
    const t = await createTenant(undefined, 'leased partner');
    await setLimits(t, { policies: [{ name: 'burst', limit: 5, window_s: 10 }] });
    const id = requestId('leased-burst');
    const calls = await Promise.all(
      Array.from({ length: 50 }, () =>
        asTenant(t, '/agent/lists', { headers: { 'x-request-id': id } }),
      ),
    );
    expect(calls.filter((c) => c.res.status === 200)).toHaveLength(5);
    const refused = calls.filter((c) => c.res.status === 429);
    expect(refused).toHaveLength(45);
    for (const r of refused) {
      expect(r.body.code).toBe(ERRORS.RATE_LIMITED.code);
      expect(r.body.data.policy).toBe('burst');
      expect(secondsHeader(r.res, 'retry-after')).toBeGreaterThanOrEqual(1);
    }
    expect(await upstreamSaw(id)).toHaveLength(5);
  });

  it('counts in a sliding window: a burst at the end of one window and the start of the next passes only up to the limit', async () => {
    const t = await createTenant();
    await setLimits(t, { policies: [{ name: 'burst', limit: 5, window_s: 10 }] });
    const edge = Math.ceil(Date.now() / 10_000) * 10_000 + 10_000;
    clockAt(edge - 200);
    const late = await Promise.all(Array.from({ length: 5 }, () => asTenant(t, '/agent/lists')));
    clockAt(edge + 200);
    const early = await Promise.all(Array.from({ length: 5 }, () => asTenant(t, '/agent/lists')));
    const passed = [...late, ...early].filter((c) => c.res.status === 200);
    expect(passed).toHaveLength(5);
    expect(late.every((c) => c.res.status === 200)).toBe(true);
    // A fixed window would have let all of `early` through; the sliding one holds it to the limit.
    expect(early.every((c) => c.res.status === 429)).toBe(true);
    // One window (plus one slot) after the burst, it has left the count.
    clockAt(edge - 200 + 10_500);
    expect((await asTenant(t, '/agent/lists')).res.status).toBe(200);
  });

  it("counts a token's own limits besides its tenant's, and names the token's policy", async () => {
    const t = await createTenant();
    const capped = await envelope(
      await admin(`/tenants/${t.id}/tokens`, {
        method: 'POST',
        body: JSON.stringify({
          name: 'partner',
          limits: { policies: [{ name: 'burst', limit: 3, window_s: 60 }] },
        }),
      }),
    );
    const partner = { ...t, token: capped.data.token as string, tokenId: capped.data.id as string };
    expect(capped.data.limits).toEqual({
      policies: [{ name: 'burst', limit: 3, window_s: 60 }],
      quota: {},
    });
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await asTenant(partner, '/agent/lists'));
    expect(results.map((r) => r.res.status)).toEqual([200, 200, 200, 429]);
    const refused = results[3];
    expect(refused?.body.data.policy).toBe('burst-token');
    expect(refused?.body.msg).toContain('"burst-token"');
    expect(refused?.res.headers.get('ratelimit-policy')).toContain('"burst-token";q=3;w=60');
    // The tenant's other token is not held back by the partner's cap.
    expect((await asTenant(t, '/agent/lists')).res.status).toBe(200);

    // Listed with the token, and changed or removed through the operator API.
    const listed = await envelope(await admin(`/tenants/${t.id}/tokens`));
    const row = listed.data.tokens.find((x: { id: string }) => x.id === partner.tokenId);
    expect(row.limits.policies[0]).toMatchObject({ name: 'burst', limit: 3 });
    const removed = await admin(`/tenants/${t.id}/tokens/${partner.tokenId}/limits`, {
      method: 'DELETE',
    });
    expect(removed.status).toBe(200);
    expect((await asTenant(partner, '/agent/lists')).res.status).toBe(200);
  });

  it("holds a first token's own limits given at tenant creation, and through rotation", async () => {
    const created = await envelope(
      await admin('/tenants', {
        method: 'POST',
        body: JSON.stringify({
          name: 'capped from the start',
          platform_key: platformKeys.demo,
          token: {
            name: 'partner',
            limits: { policies: [{ name: 'burst', limit: 2, window_s: 60 }] },
          },
        }),
      }),
    );
    expect(created.data.limits.policies[0]).toMatchObject({ name: 'burst', limit: 2 });
    const t = {
      id: created.data.tenant_id,
      token: created.data.token,
      tokenId: created.data.token_id,
    };
    const first = [];
    for (let i = 0; i < 3; i++) first.push((await asTenant(t, '/agent/lists')).res.status);
    expect(first).toEqual([200, 200, 429]);

    const rotated = await envelope(
      await admin(`/tenants/${t.id}/tokens/${t.tokenId}/rotate`, {
        method: 'POST',
        body: JSON.stringify({ overlap_s: 0 }),
      }),
    );
    const successor = {
      ...t,
      token: rotated.data.token as string,
      tokenId: rotated.data.id as string,
    };
    const listed = await envelope(await admin(`/tenants/${t.id}/tokens`));
    const row = listed.data.tokens.find((x: { id: string }) => x.id === successor.tokenId);
    expect(row.limits.policies[0]).toMatchObject({ name: 'burst', limit: 2 });
  });

  it('refuses a token revoked in another isolate within the lease time, and at once in this one', async () => {
    clockAt(Date.now());
    const t = await createTenant();
    await warm(t);
    await revokeWhileKvLags(t.id, t.token, t.tokenId);
    later(LEASE_MAX_MS);
    const { res, body } = await asTenant(t, '/agent/lists');
    expect(res.status).toBe(401);
    expect(body.code).toBe(ERRORS.TOKEN_REVOKED.code);

    const here = await createTenant();
    await warm(here);
    await admin(`/tenants/${here.id}/tokens/${here.tokenId}`, { method: 'DELETE' });
    await expectRefusal(await asTenant(here, '/agent/lists'), 'TOKEN_REVOKED');
  });

  it('refuses a tenant disabled in another isolate within the lease time, and at once in this one', async () => {
    clockAt(Date.now());
    const t = await createTenant();
    await warm(t);
    // The tenant's TenantGuard, as another isolate's operator change would reach it.
    await guardFor(testEnv, t.id).tenantRecord().setDisabled(true);
    later(LEASE_MAX_MS);
    const { res, body } = await asTenant(t, '/agent/lists');
    expect(res.status).toBe(403);
    expect(body.code).toBe(ERRORS.TENANT_DISABLED.code);

    const here = await createTenant();
    await warm(here);
    await admin(`/tenants/${here.id}/disable`, { method: 'POST' });
    await expectRefusal(await asTenant(here, '/agent/lists'), 'TENANT_DISABLED');
    await admin(`/tenants/${here.id}/enable`, { method: 'POST' });
    expect((await asTenant(here, '/agent/lists')).res.status).toBe(200);
  });

  it('refuses a deleted tenant at once here, and within the lease time where KV still knows it', async () => {
    clockAt(Date.now());
    const here = await createTenant();
    await warm(here);
    await admin(`/tenants/${here.id}`, { method: 'DELETE' });
    const gone = await asTenant(here, '/agent/lists');
    expect([
      [401, ERRORS.INVALID_TOKEN.code],
      [403, ERRORS.TENANT_DISABLED.code],
    ]).toContainEqual([gone.res.status, gone.body.code]);

    // Elsewhere: KV has not caught up (the memo still holds the tenant), only the guard knows.
    const t = await createTenant();
    const remember = { TENANT_MEMO_TTL_MS: '60000' };
    const call = () =>
      gatewayWith(remember, '/agent/lists', { headers: { authorization: t.token } });
    for (let i = 0; i < 4; i++) expect((await call()).status).toBe(200);
    await guardFor(testEnv, t.id).tenantRecord().setDisabled(true);
    later(LEASE_MAX_MS);
    await expectRefusal(await call(), 'TENANT_DISABLED');
  });

  it('sees a purge made in another isolate within the lease time, and at once in this one', async () => {
    clockAt(Date.now());
    const t = await createTenant();
    await asTenant(t, '/team/lists');
    expect((await asTenant(t, '/team/lists')).res.headers.get('x-cache')).toBe('HIT');
    await guardFor(testEnv, t.id)
      .tenantRecord()
      .setCacheVersion(`elsewhere-${crypto.randomUUID()}`);
    later(LEASE_MAX_MS);
    expect((await asTenant(t, '/team/lists')).res.headers.get('x-cache')).toBe('MISS');
  });
});

describe('leased limits when the TenantGuard cannot be reached', () => {
  const unreachable = unreachableObjects('Network connection lost.') as typeof testEnv.TENANT_GUARD;
  // Its regional broker is out of reach too (limits-fleet tests the broker riding it out).
  const unreachableBroker = unreachable as unknown as typeof testEnv.LEASE_BROKER;
  // What an isolate holds ends within two lease times: the lease in use, and one
  // renewed ahead from its end (asked for when a slot end cut the first one short).
  const HELD_FOR_MS = 2 * LEASE_MAX_MS;
  const call = (t: TestTenant, vars: Record<string, unknown> = {}) =>
    gatewayWith(
      { TENANT_GUARD: unreachable, LEASE_BROKER: unreachableBroker, ...vars },
      '/agent/lists',
      {
        headers: { authorization: t.token },
      },
    );

  it('fails closed: admits from the lease it holds, then 503 once it ends', async () => {
    clockAtSlotStart();
    const t = await createTenant();
    await warm(t);
    expect((await call(t)).status).toBe(200);
    later(HELD_FOR_MS);
    const res = await call(t);
    expect(res.status).toBe(503);
    expect((await envelope(res)).code).toBe(ERRORS.LIMITER_UNAVAILABLE.code);
  });

  it('fails open: goes on without limits once the lease ends', async () => {
    clockAtSlotStart();
    const t = await createTenant();
    await warm(t);
    later(HELD_FOR_MS);
    const res = await call(t, { LIMITER_FAILURE_MODE: 'open' });
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit')).toBeNull();
  });
});

describe('TenantGuard calls', () => {
  it('a busy tenant calls its TenantGuard far less than once per request, counted by the guard', async () => {
    const t = await createTenant();
    const requests = 300;
    for (let i = 0; i < requests / 20; i++) {
      await Promise.all(Array.from({ length: 20 }, () => asTenant(t, '/agent/lists')));
    }
    const usage = await envelope(await admin(`/tenants/${t.id}/usage`));
    const { acquires, renewals, exact_admits } = usage.data.guard_calls;
    expect(exact_admits).toBe(0);
    expect(acquires + renewals).toBeGreaterThan(0);
    // One call per request without leases; a few per second of the run with them (a busy
    // machine stretches the run, so the bound leaves room for that).
    expect(acquires + renewals).toBeLessThan(requests / 3);
  });

  it("isolates ask their regional broker; the usage shows its calls apart from the root's", async () => {
    const t = await createTenant();
    // At least MIN_POOLED_LIMIT a window: smaller meters are not pooled by brokers.
    await setLimits(t, { policies: [{ name: 'burst', limit: 1000, window_s: 60 }] });
    for (let i = 0; i < 5; i++) {
      const statuses = await Promise.all(
        Array.from({ length: 20 }, async () => (await asTenant(t, '/agent/lists')).res.status),
      );
      expect(statuses).toEqual(Array(20).fill(200));
    }
    const calls = (await envelope(await admin(`/tenants/${t.id}/usage`))).data.guard_calls;
    // Brokers report their isolates' calls with each call of their own to the root, so
    // the last few are not in yet: each side is counted, neither beyond the 100 requests.
    // (Which side is larger depends on timing: a busy machine makes brokers pass more through.)
    expect(calls.broker_acquires).toBeGreaterThan(0);
    expect(calls.broker_acquires + calls.broker_renewals).toBeLessThanOrEqual(100);
    expect(calls.acquires + calls.renewals).toBeGreaterThan(0);
    expect(calls.acquires + calls.renewals).toBeLessThanOrEqual(100);
  });

  it('a flood at 10x a small limit admits exactly the limit, then costs about a guard call a second', async () => {
    const t = await createTenant();
    await setLimits(t, { policies: [{ name: 'burst', limit: 10, window_s: 1 }] });
    const guardCalls = async () => {
      const g = (await envelope(await admin(`/tenants/${t.id}/usage`))).data.guard_calls;
      return g.acquires + g.renewals + g.exact_admits + g.broker_acquires + g.broker_renewals;
    };
    // 100 requests in 0.9 s of the gateway's clock: ten rounds of ten at once, 100 ms
    // apart. The window (a second, in slots of 50 ms) stays full from the first round on.
    clockAtSlotStart();
    const answers: Awaited<ReturnType<typeof asTenant>>[] = [];
    let spentAt = 0;
    for (let round = 0; round < 10; round++) {
      answers.push(
        ...(await Promise.all(Array.from({ length: 10 }, () => asTenant(t, '/agent/lists')))),
      );
      if (round === 1) spentAt = await guardCalls();
      later(100);
    }
    expect(answers.filter((a) => a.res.status === 200)).toHaveLength(10);
    const refused = answers.filter((a) => a.res.status === 429);
    expect(refused).toHaveLength(90);
    for (const r of refused) {
      expect(r.body.code).toBe(ERRORS.RATE_LIMITED.code);
      expect(r.body.data).toMatchObject({ policy: 'burst', retry_after_s: 1 });
      expect(r.res.headers.get('retry-after')).toBe('1');
      expect(r.res.headers.get('ratelimit-policy')).toBe('"burst";q=10;w=1');
      expect(r.res.headers.get('ratelimit')).toBe('"burst";r=0;t=1');
    }
    // Rounds 2 to 9 (0.8 s): refused here until the window frees, asking the guard at most
    // once a lease time (LEASE_MAX_MS, a second) instead of once a round.
    expect((await guardCalls()) - spentAt).toBeLessThanOrEqual(2);
  });

  it('an exact tenant calls it once per request', async () => {
    const t = await createTenant();
    await setLimits(t, {
      policies: [{ name: 'burst', limit: 1000, window_s: 60 }],
      limiter: 'exact',
    });
    for (let i = 0; i < 10; i++) await asTenant(t, '/agent/lists');
    const usage = await envelope(await admin(`/tenants/${t.id}/usage`));
    expect(usage.data.guard_calls.exact_admits).toBe(10);
  });
});
