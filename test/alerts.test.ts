/**
 * Quota alerts: one signed POST per threshold crossing per period, retried with
 * backoff from the TenantGuard's alarm (time injected through its alerts part's deliver),
 * given up after 5 tries, and recorded in the audit log. The emulator receives them.
 */
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { ERRORS } from '../src/errors';
import { hmacSha256Hex } from '../src/hash';
import { ALERT_BACKOFF_MS, ALERT_MAX_TRIES } from '../src/objects/tenant/alerts/alerts';
import { guardFor } from '../src/objects/tenant/tenant-guard';
import {
  admin,
  asTenant,
  createTenant,
  envelope,
  expectRefusal,
  gatewayWith,
  type TestTenant,
  testEnv,
  UPSTREAM,
} from './helpers';

interface Delivery {
  headers: Record<string, string>;
  body: string;
  failed: boolean;
}

const receiver = () => `alerts-${crypto.randomUUID()}`;
const deliveries = async (name: string): Promise<Delivery[]> =>
  (await fetch(`${UPSTREAM}/__emulator/webhooks/${name}`)).json();
const guardOf = (t: TestTenant) => testEnv.TENANT_GUARD.get(testEnv.TENANT_GUARD.idFromName(t.id));

/** A tenant with a daily quota of `daily` (exact mode: every request counted at once) and a webhook. */
async function alerted(daily: number, name: string, thresholds?: number[]) {
  const t = await createTenant();
  await admin(`/tenants/${t.id}/limits`, {
    method: 'PUT',
    body: JSON.stringify({ policies: [], quota: { daily }, limiter: 'exact' }),
  });
  const set = await envelope(
    await admin(`/tenants/${t.id}/alerts`, {
      method: 'PUT',
      body: JSON.stringify({
        url: `${UPSTREAM}/__emulator/webhooks/${name}`,
        ...(thresholds ? { thresholds } : {}),
      }),
    }),
  );
  return { t, secret: set.data.secret as string, thresholds: set.data.thresholds as number[] };
}

describe('quota alerts', () => {
  it('sends one signed POST per crossing, at 80 % and at 100 %, and never twice for one crossing', async () => {
    const name = receiver();
    const { t, secret, thresholds } = await alerted(10, name);
    expect(thresholds).toEqual([80, 100]);
    for (let i = 0; i < 7; i++) await asTenant(t, '/agent/lists');
    await guardFor(testEnv, t.id).alerts().deliver(Date.now());
    expect(await deliveries(name)).toHaveLength(0);
    await asTenant(t, '/agent/lists'); // 8 of 10: 80 %
    await asTenant(t, '/agent/lists'); // 9: still past 80 %, no new crossing
    await guardFor(testEnv, t.id).alerts().deliver(Date.now());
    let got = await deliveries(name);
    expect(got).toHaveLength(1);
    const first = got[0];
    const payload = JSON.parse(first?.body ?? '{}');
    expect(payload).toMatchObject({
      tenant_id: t.id,
      policy: 'daily',
      threshold: 80,
      used: 8,
      limit: 10,
    });
    expect(Date.parse(payload.period_end) % 86_400_000).toBe(0);
    expect(first?.headers['x-gateway-signature']).toBe(
      `sha256=${await hmacSha256Hex(secret, first?.body ?? '')}`,
    );
    expect(first?.headers['content-type']).toBe('application/json');

    await asTenant(t, '/agent/lists'); // 10 of 10: 100 %
    await asTenant(t, '/agent/lists'); // refused: no crossing
    await guardFor(testEnv, t.id).alerts().deliver(Date.now());
    await guardFor(testEnv, t.id).alerts().deliver(Date.now());
    got = await deliveries(name);
    expect(got.map((d) => JSON.parse(d.body).threshold)).toEqual([80, 100]);
    // The alarm was set for the delivery, on the real clock.
    expect(await runDurableObjectAlarm(guardOf(t))).toBe(true);
    expect(await deliveries(name)).toHaveLength(2);

    const audit = await envelope(await admin(`/audit?tenant_id=${t.id}`));
    const actions = audit.data.data.map((e: { action: string }) => e.action);
    expect(actions.filter((a: string) => a === 'alert.delivered')).toHaveLength(2);
    expect(JSON.stringify(audit)).not.toContain(secret);
  });

  /** Runs deliveries with time moving on (the guard's own alarm may run some too) until none is left. */
  async function deliverUntilDone(t: TestTenant) {
    const alerts = () => guardFor(testEnv, t.id).alerts();
    let at = Date.now();
    for (let round = 0; round < 20; round++) {
      const { nextAt } = await alerts().deliver(at);
      if (nextAt === null) return;
      at = Math.max(at, nextAt);
    }
    throw new Error('alerts still queued after 20 rounds');
  }

  it('lists the crossings of a tenant without a webhook, at the default thresholds, once each', async () => {
    const t = await createTenant();
    await admin(`/tenants/${t.id}/limits`, {
      method: 'PUT',
      body: JSON.stringify({ policies: [], quota: { daily: 5 }, limiter: 'exact' }),
    });
    for (let i = 0; i < 5; i++) expect((await asTenant(t, '/agent/lists')).res.status).toBe(200);
    await expectRefusal(await asTenant(t, '/agent/lists'), 'QUOTA_EXHAUSTED');
    const listed = await envelope(await admin(`/tenants/${t.id}/alerts/recent`));
    const quota = listed.data.alerts.filter(
      (a: { alert: { kind: string } }) => a.alert.kind === 'quota',
    );
    expect(
      quota.map((a: { delivery: string; alert: { threshold: number; used: number } }) => [
        a.alert.threshold,
        a.alert.used,
        a.delivery,
      ]),
    ).toEqual([
      [100, 5, 'no_webhook'],
      [80, 4, 'no_webhook'],
    ]);
  });

  it('retries after the receiver fails twice, with backoff, and delivers on the third try', async () => {
    const name = receiver();
    await fetch(`${UPSTREAM}/__emulator/webhooks/${name}/fail`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ times: 2, status: 503 }),
    });
    const { t } = await alerted(2, name, [50]);
    await asTenant(t, '/agent/lists');
    await deliverUntilDone(t);
    const got = await deliveries(name);
    expect(got.map((d) => d.failed)).toEqual([true, true, false]);
    expect(new Set(got.map((d) => d.body)).size).toBe(1);
    const audit = await envelope(await admin(`/audit?tenant_id=${t.id}`));
    const delivered = audit.data.data.filter(
      (e: { action: string }) => e.action === 'alert.delivered',
    );
    expect(delivered).toEqual([
      expect.objectContaining({ detail: expect.objectContaining({ attempts: 3 }) }),
    ]);
  });

  it('waits out the backoff between tries', async () => {
    const name = receiver();
    await fetch(`${UPSTREAM}/__emulator/webhooks/${name}/fail`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ times: 100 }),
    });
    const { t } = await alerted(2, name, [50]);
    await asTenant(t, '/agent/lists');
    const alerts = () => guardFor(testEnv, t.id).alerts();
    // Once a try has failed, the next is not due before the backoff has passed.
    const { nextAt } = await alerts().deliver(Date.now() + ALERT_BACKOFF_MS * 100);
    expect(nextAt).not.toBeNull();
    const tries = (await deliveries(name)).length;
    expect((await alerts().deliver((nextAt ?? 0) - 1)).results).toEqual([]);
    expect(await deliveries(name)).toHaveLength(tries);
  });

  it(`gives up after ${ALERT_MAX_TRIES} tries and records the failure`, async () => {
    const name = receiver();
    await fetch(`${UPSTREAM}/__emulator/webhooks/${name}/fail`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ times: 100 }),
    });
    const { t } = await alerted(2, name, [50]);
    await asTenant(t, '/agent/lists');
    await deliverUntilDone(t);
    expect(await deliveries(name)).toHaveLength(ALERT_MAX_TRIES);
    const audit = await envelope(await admin(`/audit?tenant_id=${t.id}`));
    const failed = audit.data.data.filter((e: { action: string }) => e.action === 'alert.failed');
    expect(failed).toEqual([
      expect.objectContaining({ detail: expect.objectContaining({ attempts: ALERT_MAX_TRIES }) }),
    ]);
  });

  it('shows the webhook without its secret, validates it, and can remove it', async () => {
    const name = receiver();
    const { t, secret } = await alerted(5, name);
    const shown = await envelope(await admin(`/tenants/${t.id}/alerts`));
    expect(shown.data).toEqual({
      url: `${UPSTREAM}/__emulator/webhooks/${name}`,
      thresholds: [80, 100],
      server_error_percent: 10,
    });
    expect(JSON.stringify(shown)).not.toContain(secret);
    const bad = await admin(`/tenants/${t.id}/alerts`, {
      method: 'PUT',
      body: JSON.stringify({ url: 'ftp://example.com/hook', thresholds: [150] }),
    });
    await expectRefusal(bad, 'VALIDATION_FAILED');
    expect((await admin(`/tenants/${t.id}/alerts`, { method: 'DELETE' })).status).toBe(200);
    expect((await envelope(await admin(`/tenants/${t.id}/alerts`))).data).toBeNull();
  });

  it('refuses a webhook a production gateway must not call, naming the field', async () => {
    const t = await createTenant();
    // A production gateway's usage sink is https too (the tests' local sink is plain http).
    const production = {
      WEBHOOK_LOCAL_TARGETS: 'refuse',
      USAGE_SINK_URL: 'https://sink.example.com/usage',
    };
    const put = (url: string) =>
      gatewayWith(production, `/admin/tenants/${t.id}/alerts`, {
        method: 'PUT',
        headers: {
          authorization: `Bearer ${testEnv.ADMIN_TOKEN}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ url }),
      });
    for (const [url, why] of [
      [`${UPSTREAM}/__emulator/webhooks/x`, 'https'],
      ['https://127.0.0.1/hook', 'loopback'],
      ['https://169.254.169.254/latest', 'link-local'],
      ['https://10.0.0.7/hook', 'private'],
      ['https://user:secret@hooks.example.com/hook', 'credentials'],
    ] as const) {
      const res = await put(url);
      const body = await envelope(res);
      expect(res.status, url).toBe(400);
      expect(body.code).toBe(ERRORS.VALIDATION_FAILED.code);
      expect(body.data.errors[0]).toMatchObject({ location: 'body', field: 'url' });
      expect(body.msg).toContain(why);
      expect(body.msg).not.toContain('secret@');
    }
    expect((await put('https://hooks.example.com/quota')).status).toBe(200);
  });

  it('stores the signing secret sealed under KEY_ENCRYPTION_KEY, never in the clear', async () => {
    const { t, secret } = await alerted(5, receiver());
    const stored = await runInDurableObject(guardOf(t), (_, state) =>
      state.storage.sql.exec<{ secret: string }>('SELECT secret FROM alert_config').one(),
    );
    expect(stored.secret).toMatch(/^v1\.k2\./);
    expect(stored.secret).not.toContain(secret);
  });

  it('does not follow a redirect: the try fails, and the other address gets nothing', async () => {
    const name = receiver();
    const elsewhere = receiver();
    await fetch(`${UPSTREAM}/__emulator/webhooks/${name}/fail`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        times: 1,
        status: 307,
        location: `${UPSTREAM}/__emulator/webhooks/${elsewhere}`,
      }),
    });
    const { t } = await alerted(2, name, [50]);
    await asTenant(t, '/agent/lists');
    // The redirect fails the first try; the second is delivered where the webhook points.
    await deliverUntilDone(t);
    expect((await deliveries(name)).map((d) => d.failed)).toEqual([true, false]);
    expect(await deliveries(elsewhere)).toEqual([]);
  });
});
