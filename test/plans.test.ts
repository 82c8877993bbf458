/**
 * Plans (docs/LIMITS.md, "Plans"): named limits that tenants are on. A plan
 * changed reaches every tenant on it within the revocation promise: at once in
 * the isolate that made the change, and within LEASE_MAX_MS elsewhere (injected
 * time, as limits-leased.test.ts shows it for revocations). A tenant's own limits
 * still win; bad input is refused with its field named.
 */
import { runInDurableObject } from 'cloudflare:test';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import type { Limits } from '../src/metering/policy';
import { type PlanBook, planBook } from '../src/objects/plans/plan-book';
import { guardFor, guardStub, type TenantGuard } from '../src/objects/tenant/tenant-guard';
import { loadSettings } from '../src/settings';
import { tenantKey } from '../src/tenants/kv-keys';
import {
  admin,
  asTenant,
  createTenant,
  envelope,
  expectRefusal,
  platformKeys,
  type TestTenant,
  testEnv,
  until,
} from './helpers';

/** The tests' setting, as the gateway reads it (not a copy of its default). */
const { LEASE_MAX_MS } = loadSettings(testEnv);
afterEach(() => vi.useRealTimers());

/** One fixed hour-long window of `limit`, so what a request sees does not depend on the clock. */
const hourly = (limit: number, extra: Partial<Limits> = {}): Limits => ({
  policies: [{ name: 'hourly', limit, window_s: 3600, algorithm: 'fixed' }],
  quota: {},
  ...extra,
});

const uniquePlan = (label: string) => `${label}-${crypto.randomUUID().slice(0, 8)}`.toLowerCase();

async function putPlan(name: string, limits: Limits) {
  const res = await admin(`/plans/${name}`, { method: 'PUT', body: JSON.stringify(limits) });
  const body = await envelope(res);
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.data;
}

async function join(t: TestTenant, plan: string | null) {
  const res = await admin(`/tenants/${t.id}`, { method: 'PATCH', body: JSON.stringify({ plan }) });
  expect(res.status, JSON.stringify(await res.clone().json())).toBe(200);
  return (await envelope(res)).data;
}

const status = async (t: TestTenant) => (await asTenant(t, '/agent/lists')).res.status;

describe('plans', () => {
  it('a plan changed: both tenants on it are refused at the new limit, at once here', async () => {
    const plan = uniquePlan('partner');
    await putPlan(plan, hourly(1000, { limiter: 'exact' }));
    const a = await createTenant(undefined, 'plan a');
    const b = await createTenant(undefined, 'plan b');
    expect((await join(a, plan)).plan).toBe(plan);
    await join(b, plan);
    for (const t of [a, b]) for (let i = 0; i < 3; i++) expect(await status(t)).toBe(200);

    // Lowered to 3 an hour: each tenant has made 3, so the next one of each is refused.
    const changed = await putPlan(plan, hourly(3, { limiter: 'exact' }));
    expect(changed).toMatchObject({ name: plan, tenants: 2, pending: 0 });
    for (const t of [a, b]) {
      const refused = await asTenant(t, '/agent/lists');
      const body = await expectRefusal(refused, 'RATE_LIMITED');
      expect(body.data.policy).toBe('hourly');
      expect(refused.res.headers.get('ratelimit-policy')).toBe('"hourly";q=3;w=3600');
    }
    // Raised again: both pass.
    await putPlan(plan, hourly(1000, { limiter: 'exact' }));
    for (const t of [a, b]) expect(await status(t)).toBe(200);

    const usage = await envelope(await admin(`/tenants/${a.id}/usage`));
    expect(usage.data).toMatchObject({
      plan,
      custom: false,
      limits: hourly(1000, { limiter: 'exact' }),
    });
    const listed = await envelope(await admin('/plans'));
    expect(listed.data.plans.find((p: { name: string }) => p.name === plan)).toMatchObject({
      tenants: 2,
      pending: 0,
      limits: hourly(1000, { limiter: 'exact' }),
    });
  });

  it('a plan changed from another isolate: leased tenants are refused within LEASE_MAX_MS', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const plan = uniquePlan('leased');
    await putPlan(plan, hourly(1000));
    const tenants = [
      await createTenant(undefined, 'leased a'),
      await createTenant(undefined, 'leased b'),
    ];
    for (const t of tenants) {
      await join(t, plan);
      // Enough requests that this isolate holds a lease of the old limit.
      for (let i = 0; i < 6; i++) expect(await status(t)).toBe(200);
    }
    // Straight to the PlanBook, as an operator's call in another isolate would: this
    // isolate's leases are not dropped, they end.
    await planBook(testEnv).put(plan, hourly(2), 'test', Date.now());
    vi.setSystemTime(Date.now() + LEASE_MAX_MS);
    for (const t of tenants) await expectRefusal(await asTenant(t, '/agent/lists'), 'RATE_LIMITED');
  });

  it("a rollout cut short after its first wave still reaches every tenant (the book's alarm)", async () => {
    const plan = uniquePlan('cut');
    await putPlan(plan, hourly(1000, { limiter: 'exact' }));
    const tenants: TestTenant[] = [];
    for (let i = 0; i < 5; i++) {
      const t = await createTenant(undefined, `cut ${i}`);
      await join(t, plan);
      tenants.push(t);
    }
    // Two guards a call, and only the first call made: an operator's request that
    // stopped (or was cancelled) after its first wave.
    const book = planBook(testEnv);
    await runInDurableObject(book, (instance: PlanBook) => {
      instance.waveSize = 2;
    });
    try {
      const first = await book.put(plan, hourly(2, { limiter: 'exact' }), 'test', Date.now());
      expect(first.rollout.applied).toHaveLength(2);
      expect(first.rollout.due).toBeGreaterThan(0);
      await until(
        async () => (await envelope(await admin(`/plans/${plan}`))).data.pending === 0,
        'every tenant on the plan reached',
      );
    } finally {
      await runInDurableObject(book, (instance: PlanBook) => {
        instance.waveSize = 1000;
      });
    }
    for (const t of tenants) {
      const usage = await envelope(await admin(`/tenants/${t.id}/usage`));
      expect(usage.data).toMatchObject({ plan, limits: hourly(2, { limiter: 'exact' }) });
    }
  });

  it('a plan raised from another isolate ends a local refusal (refusal lease) within LEASE_MAX_MS', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const plan = uniquePlan('refused');
    await putPlan(plan, hourly(3));
    const t = await createTenant(undefined, 'refused locally');
    await join(t, plan);
    for (let i = 0; i < 3; i++) expect(await status(t)).toBe(200);
    // The hour is full: the guard refuses, and this isolate then refuses the tenant itself.
    const guardCalls = async () => {
      const g = (await envelope(await admin(`/tenants/${t.id}/usage`))).data.guard_calls;
      return g.acquires + g.renewals + g.exact_admits + g.broker_acquires + g.broker_renewals;
    };
    await expectRefusal(await asTenant(t, '/agent/lists'), 'RATE_LIMITED');
    const before = await guardCalls();
    const local = await asTenant(t, '/agent/lists');
    await expectRefusal(local, 'RATE_LIMITED');
    expect(local.res.headers.get('ratelimit-policy')).toBe('"hourly";q=3;w=3600');
    expect(await guardCalls()).toBe(before);
    // Raised straight at the PlanBook, as an operator's call in another isolate would be:
    // the refusal this isolate repeats lasts one lease time at most.
    await planBook(testEnv).put(plan, hourly(10), 'test', Date.now());
    vi.setSystemTime(Date.now() + LEASE_MAX_MS);
    expect(await status(t)).toBe(200);
  });

  it("a tenant's own limits win over its plan's; removing them returns it to the plan", async () => {
    const plan = uniquePlan('base');
    await putPlan(plan, hourly(2, { limiter: 'exact' }));
    const t = await createTenant(undefined, 'own limits');
    await join(t, plan);
    const own = hourly(1000, { limiter: 'exact' });
    await admin(`/tenants/${t.id}/limits`, { method: 'PUT', body: JSON.stringify(own) });
    for (let i = 0; i < 3; i++) expect(await status(t)).toBe(200);
    await putPlan(plan, hourly(1, { limiter: 'exact' }));
    expect(await status(t)).toBe(200);

    const reset = await envelope(await admin(`/tenants/${t.id}/limits`, { method: 'DELETE' }));
    expect(reset.data.limits).toEqual(hourly(1, { limiter: 'exact' }));
    await expectRefusal(await asTenant(t, '/agent/lists'), 'RATE_LIMITED');

    // Off the plan: the gateway's defaults again.
    await join(t, null);
    expect(await status(t)).toBe(200);
    const usage = await envelope(await admin(`/tenants/${t.id}/usage`));
    expect(usage.data.plan).toBeNull();
  });

  it('a plan joined by a change that finds the tenant deleted is left again: the plan can go', async () => {
    const plan = uniquePlan('orphan');
    await putPlan(plan, hourly(1000));
    const t = await createTenant(undefined, 'deleted meanwhile');
    const record = await testEnv.TENANTS.get(tenantKey(t.id));
    expect((await admin(`/tenants/${t.id}`, { method: 'DELETE' })).status).toBe(200);
    // KV read in another location may show the record for up to 60 s after its deletion:
    // put back here, the PATCH's own read finds it; the TenantGuard knows it is gone.
    await testEnv.TENANTS.put(tenantKey(t.id), record!);
    onTestFinished(() => testEnv.TENANTS.delete(tenantKey(t.id)));
    const res = await admin(`/tenants/${t.id}`, {
      method: 'PATCH',
      body: JSON.stringify({ plan }),
    });
    expect(res.status).toBe(404);
    expect((await envelope(await admin(`/plans/${plan}`))).data.tenants).toBe(0);
    expect((await admin(`/plans/${plan}`, { method: 'DELETE' })).status).toBe(200);
  });

  it('a plan joined while a DELETE removes the tenant is left by the DELETE: the plan can go', async () => {
    const plan = uniquePlan('deleting');
    await putPlan(plan, hourly(1000));
    const t = await createTenant(undefined, 'joins while deleted');
    // The DELETE is held as its TenantGuard is about to remove the record (watched, not
    // changed: the removal runs as written once let go); the guard takes other calls meanwhile.
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let removing = false;
    await runInDurableObject(guardStub(testEnv, t.id), (guard: TenantGuard) => {
      const record = Reflect.get(
        Reflect.get(Reflect.get(guard, 'parts'), 'tenantRecord'),
        'record',
      );
      const remove = record.remove.bind(record);
      record.remove = async (...args: Parameters<typeof remove>) => {
        removing = true;
        await held;
        return remove(...args);
      };
    });
    const deleting = admin(`/tenants/${t.id}`, { method: 'DELETE' });
    await until(async () => removing, 'the DELETE at the removal');
    // A PATCH joining the plan now: the record is still there, so it joins and answers 200.
    expect((await join(t, plan)).plan).toBe(plan);
    release();
    expect((await deleting).status).toBe(200);
    expect((await admin(`/tenants/${t.id}`)).status).toBe(404);
    // No member is left behind: the plan shows none and can be removed.
    expect((await envelope(await admin(`/plans/${plan}`))).data.tenants).toBe(0);
    expect((await admin(`/plans/${plan}`, { method: 'DELETE' })).status).toBe(200);
  });

  it('a tenant created on a plan starts with its limits, and leaves it when deleted', async () => {
    const plan = uniquePlan('start');
    await putPlan(plan, hourly(1, { limiter: 'exact' }));
    const res = await admin('/tenants', {
      method: 'POST',
      body: JSON.stringify({ name: 'born on a plan', platform_key: platformKeys.demo, plan }),
    });
    expect(res.status).toBe(201);
    const made = (await envelope(res)).data;
    expect(made.plan).toBe(plan);
    const t = { id: made.tenant_id, token: made.token, tokenId: made.token_id };
    const shown = await envelope(await admin(`/tenants/${t.id}`));
    expect(shown.data.plan).toBe(plan);
    await admin(`/tenants/${t.id}`, { method: 'DELETE' });
    const after = await envelope(await admin(`/plans/${plan}`));
    expect(after.data.tenants).toBe(0);
    expect((await admin(`/plans/${plan}`, { method: 'DELETE' })).status).toBe(200);
    expect((await admin(`/plans/${plan}`)).status).toBe(404);
  });

  it("the PlanBook alone says a tenant's plan: the tenant, the list and the guard agree", async () => {
    const [gold, silver] = [uniquePlan('gold'), uniquePlan('silver')];
    for (const p of [gold, silver]) await putPlan(p, hourly(1000));
    const t = await createTenant(undefined, 'one plan');
    const shownPlan = async () => {
      const one = (await envelope(await admin(`/tenants/${t.id}`))).data.plan;
      const q = encodeURIComponent(t.id);
      const listed = (await envelope(await admin(`/tenants?q=${q}`))).data.tenants;
      const guard = (await envelope(await admin(`/tenants/${t.id}/usage`))).data.plan;
      return { one, listed: listed.map((r: { plan: string | null }) => r.plan), guard };
    };
    // Changes racing each other end on one plan, whichever the order they were decided in.
    for (let round = 0; round < 3; round++) {
      await Promise.all([join(t, gold), join(t, silver), join(t, null), join(t, gold)]);
      const seen = await shownPlan();
      expect(seen.listed, `round ${round}`).toEqual([seen.guard]);
      expect(seen.one, `round ${round}`).toBe(seen.guard);
    }
    // A record written before (or by a change that lost its race) says another plan:
    // not what the gateway shows, nor what it keeps.
    await join(t, silver);
    const key = `tenant:${t.id}`;
    const { value, metadata } = await testEnv.TENANTS.getWithMetadata<Record<string, unknown>>(
      key,
      'json',
    );
    await testEnv.TENANTS.put(key, JSON.stringify({ ...value, plan: gold }), {
      metadata: { ...(metadata as object), plan: gold },
    });
    expect(await shownPlan()).toEqual({ one: silver, listed: [silver], guard: silver });
    await admin(`/tenants/${t.id}`, { method: 'PATCH', body: JSON.stringify({ name: 'renamed' }) });
    const stored = await testEnv.TENANTS.getWithMetadata<Record<string, unknown>>(key, 'json');
    expect(stored.value).not.toHaveProperty('plan');
    expect(stored.metadata).not.toHaveProperty('plan');
  });

  it('keeps a later decision over an earlier one that arrives after it', async () => {
    const t = await createTenant(undefined, 'out of order');
    const limits = () => guardFor(testEnv, t.id).limits();
    await limits().applyPlan({ name: 'late', version: 1_000_000_002, limits: hourly(7) });
    await limits().applyPlan({ name: 'early', version: 1_000_000_001, limits: hourly(5) });
    const usage = await envelope(await admin(`/tenants/${t.id}/usage`));
    expect(usage.data).toMatchObject({ plan: 'late', limits: hourly(7) });
  });

  it('refuses bad input with the field named, and a plan in use', async () => {
    const t = await createTenant(undefined, 'bad plan');
    const unknown = await admin(`/tenants/${t.id}`, {
      method: 'PATCH',
      body: JSON.stringify({ plan: 'no-such-plan-here' }),
    });
    const body = await expectRefusal(unknown, 'VALIDATION_FAILED');
    expect(body.data.errors[0]).toMatchObject({ location: 'body', field: 'plan' });
    expect(body.msg).toContain('no-such-plan-here');

    const badName = await admin('/plans/Not_Lower', {
      method: 'PUT',
      body: JSON.stringify(hourly(1)),
    });
    expect((await expectRefusal(badName, 'VALIDATION_FAILED')).data.errors[0].field).toBe('name');
    const badLimits = await admin(`/plans/${uniquePlan('bad')}`, {
      method: 'PUT',
      body: JSON.stringify({ policies: [{ name: 'x', limit: 0, window_s: 10 }] }),
    });
    expect((await expectRefusal(badLimits, 'VALIDATION_FAILED')).data.errors[0].field).toBe(
      'policies.0.limit',
    );

    const plan = uniquePlan('used');
    await putPlan(plan, hourly(5));
    await join(t, plan);
    const inUse = await admin(`/plans/${plan}`, { method: 'DELETE' });
    expect((await expectRefusal(inUse, 'CONFLICT')).data.tenants).toBe(1);
    expect((await admin('/plans/never-made', { method: 'DELETE' })).status).toBe(404);
  });
});
