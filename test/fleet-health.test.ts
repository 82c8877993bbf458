/**
 * Alerts beyond quotas, and the fleet overview (docs/OBSERVABILITY.md, "Alerts",
 * "Fleet overview"): a tenant whose platform key the platform refuses raises one
 * signed alert an hour per status, and one whose server errors pass its share
 * raises another; both reach the webhook (signed, as quota alerts are) and the
 * tenant's alert log, with or without a webhook. Its TenantGuard reports its
 * figures to its fleet board, and the overview names it among the tenants whose
 * key fails.
 */
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { hmacSha256Hex } from '../src/hash';
import { fleetBoardOf } from '../src/objects/fleet/fleet-board';
import { FLEET_REPORT_MS } from '../src/objects/tenant/history/fleet-report';
import { guardFor, type TenantGuard } from '../src/objects/tenant/tenant-guard';
import {
  admin,
  asTenant,
  createTenant,
  envelope,
  injectFault,
  requestId,
  type TestTenant,
  testEnv,
  UPSTREAM,
  until,
} from './helpers';

afterEach(() => vi.useRealTimers());

const guardOf = (t: TestTenant) => testEnv.TENANT_GUARD.get(testEnv.TENANT_GUARD.idFromName(t.id));
const deliveries = async (
  name: string,
): Promise<{ headers: Record<string, string>; body: string }[]> =>
  (await fetch(`${UPSTREAM}/__emulator/webhooks/${name}`)).json();

/** Exact mode: each request's guard call carries the usage of the ones before it. */
async function exact(t: TestTenant) {
  await admin(`/tenants/${t.id}/limits`, {
    method: 'PUT',
    body: JSON.stringify({ policies: [], quota: {}, limiter: 'exact' }),
  });
}

async function webhook(t: TestTenant, extra: Record<string, unknown> = {}) {
  const name = `health-${crypto.randomUUID()}`;
  const set = await envelope(
    await admin(`/tenants/${t.id}/alerts`, {
      method: 'PUT',
      body: JSON.stringify({ url: `${UPSTREAM}/__emulator/webhooks/${name}`, ...extra }),
    }),
  );
  return { name, secret: set.data.secret as string };
}

const recent = async (t: TestTenant) =>
  (await envelope(await admin(`/tenants/${t.id}/alerts/recent`))).data.alerts;

describe('alerts beyond quotas', () => {
  it('a platform key the platform refuses: one signed alert, to the webhook and the log', async () => {
    const t = await createTenant(`sk-made-up-${crypto.randomUUID()}`, 'bad key');
    await exact(t);
    const { name, secret } = await webhook(t);
    for (let i = 0; i < 4; i++) {
      const { res, body } = await asTenant(t, '/agent/lists');
      expect([res.status, body.code]).toEqual([502, 50205]);
    }
    await guardFor(testEnv, t.id).alerts().deliver(Date.now());
    const got = await deliveries(name);
    expect(got).toHaveLength(1);
    const payload = JSON.parse(got[0]?.body ?? '{}');
    expect(payload).toMatchObject({
      kind: 'platform_key_rejected',
      tenant_id: t.id,
      upstream_status: 401,
    });
    // Raised with the first refusal the guard heard of (each call carries the one before).
    expect(payload.count).toBe(1);
    expect(got[0]?.headers['x-gateway-signature']).toBe(
      `sha256=${await hmacSha256Hex(secret, got[0]?.body ?? '')}`,
    );
    // Not again within the hour.
    for (let i = 0; i < 3; i++) await asTenant(t, '/agent/lists');
    await guardFor(testEnv, t.id).alerts().deliver(Date.now());
    expect(await deliveries(name)).toHaveLength(1);
    const log = await recent(t);
    expect(log.map((a: any) => [a.alert.kind, a.delivery])).toEqual([
      ['platform_key_rejected', 'delivered'],
    ]);
    const audit = await envelope(await admin(`/audit?tenant_id=${t.id}&action=alert.delivered`));
    expect(audit.data.data[0].detail).toMatchObject({
      kind: 'platform_key_rejected',
      upstream_status: 401,
    });
  });

  it("a refusal just before the hour, heard of just after it, raises that hour's alert", async () => {
    const t = await createTenant(`sk-made-up-${crypto.randomUUID()}`, 'bad key at the hour');
    await exact(t);
    const HOUR = 3_600_000;
    const nextHour = Math.floor(Date.now() / HOUR) * HOUR + HOUR;
    vi.useFakeTimers({ toFake: ['Date'], now: nextHour - 1000 });
    // Refused in the hour before; the next call, past the hour, brings it to the guard.
    expect((await asTenant(t, '/agent/lists')).body.code).toBe(50205);
    vi.setSystemTime(nextHour + 1000);
    expect((await asTenant(t, '/agent/lists')).body.code).toBe(50205);
    vi.useRealTimers();
    const log = await recent(t);
    expect(log.map((a: any) => [a.alert.kind, a.alert.period_start])).toEqual([
      ['platform_key_rejected', new Date(nextHour - HOUR).toISOString()],
    ]);
  });

  it('server errors past the share: one alert an hour; the log has it without a webhook too', async () => {
    const t = await createTenant();
    await exact(t);
    // 20 requests, 5 of them answered 502 by the platform: 25 %, past the default 10 %.
    for (let i = 0; i < 21; i++) {
      const id = requestId('fail');
      // Twice: a read is retried once.
      if (i % 4 === 0) await injectFault({ request_id: id, kind: 'status', status: 503, times: 2 });
      await asTenant(t, '/agent/lists', { headers: { 'x-request-id': id } });
    }
    const log = await recent(t);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({
      delivery: 'no_webhook',
      alert: { kind: 'server_errors', tenant_id: t.id, threshold: 10, requests: 20 },
    });
    expect(log[0].alert.share_percent).toBeGreaterThanOrEqual(25);

    // A higher threshold set with the webhook: that share no longer raises one.
    const quiet = await createTenant();
    await exact(quiet);
    await webhook(quiet, { server_error_percent: 50 });
    for (let i = 0; i < 21; i++) {
      const id = requestId('fail');
      if (i % 4 === 0) await injectFault({ request_id: id, kind: 'status', status: 503, times: 2 });
      await asTenant(quiet, '/agent/lists', { headers: { 'x-request-id': id } });
    }
    expect(await recent(quiet)).toEqual([]);
    const shown = await envelope(await admin(`/tenants/${quiet.id}/alerts`));
    expect(shown.data.server_error_percent).toBe(50);
  });
});

describe('the fleet overview', () => {
  it('names a tenant whose key fails, and the busiest tenants, from the fleet boards', async () => {
    const bad = await createTenant(`sk-made-up-${crypto.randomUUID()}`, 'failing key');
    const busy = await createTenant(undefined, 'busy');
    for (const t of [bad, busy]) await exact(t);
    for (let i = 0; i < 3; i++) await asTenant(bad, '/agent/lists');
    for (let i = 0; i < 40; i++) await asTenant(busy, '/agent/lists');
    // Each guard reports from its alarm, at most once a minute (it may have reported the
    // first requests already): a minute on, run it now.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + FLEET_REPORT_MS + 1000 });
    for (const t of [bad, busy]) await runDurableObjectAlarm(guardOf(t));
    vi.useRealTimers();

    const res = await admin('/overview?hours=24&limit=50');
    expect(res.status).toBe(200);
    const o = (await envelope(res)).data;
    const failing = o.key_rejected.find((r: any) => r.tenant_id === bad.id);
    expect(failing).toMatchObject({ key_rejected: 2, key_status: 401, errors_5xx: 2 });
    expect(failing.name).toMatch(/^failing key /);
    expect(o.key_rejected.some((r: any) => r.tenant_id === busy.id)).toBe(false);
    const top = o.top_requests.find((r: any) => r.tenant_id === busy.id);
    expect(top).toMatchObject({ requests: 39, key_rejected: 0 });
    expect(o.totals.requests).toBeGreaterThanOrEqual(41);
    expect(o.shards).toBe(16);

    const bad24 = await admin('/overview?hours=48');
    expect(bad24.status).toBe(400);
  });

  it('usage that comes in while a report is on its way is reported next, not lost', async () => {
    const t = await createTenant(undefined, 'reported meanwhile');
    await exact(t);
    for (let i = 0; i < 3; i++) await asTenant(t, '/agent/lists');
    // What the overview sums for the tenant, read from its board.
    const requestsOnBoard = () =>
      runInDurableObject(fleetBoardOf(testEnv, t.id), (_board, state) =>
        Number(
          state.storage.sql
            .exec(
              'SELECT COALESCE(SUM(requests), 0) AS n FROM tenant_hours WHERE tenant_id = ?',
              t.id,
            )
            .one().n,
        ),
      );

    // The tenant's fleet board held (no call gets in) until the test lets it go.
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let holding = false;
    const hold = runInDurableObject(fleetBoardOf(testEnv, t.id), (_board, state) =>
      state.blockConcurrencyWhile(() => {
        holding = true;
        return held;
      }),
    );
    await until(async () => holding, 'the board held');
    // Watched, not changed: when the guard has taken its figures for the report.
    let taken = false;
    await runInDurableObject(guardOf(t), (guard: TenantGuard) => {
      const history = Reflect.get(Reflect.get(guard, 'parts'), 'history');
      const figures = history.figures.bind(history);
      history.figures = (since: number) => {
        taken = true;
        return figures(since);
      };
    });
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + FLEET_REPORT_MS + 1000 });
    const reporting = runDurableObjectAlarm(guardOf(t));
    await until(async () => taken, 'the report on its way');
    // A request meanwhile: its guard call brings the last request's usage.
    await asTenant(t, '/agent/lists');
    release();
    await hold;
    expect(await reporting).toBe(true);
    const first = await requestsOnBoard();
    expect(first).toBeGreaterThan(0);

    // The next report carries it.
    vi.setSystemTime(Date.now() + FLEET_REPORT_MS + 1000);
    await runDurableObjectAlarm(guardOf(t));
    vi.useRealTimers();
    expect(await requestsOnBoard()).toBe(first + 1);
  });
});
