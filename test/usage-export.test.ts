/**
 * The usage export (docs/BILLING.md): each billable request becomes one CloudEvent at
 * the sink, with the fields documented and nothing secret, through the real queue and
 * the Worker's own consumer, delivered in signed batches to the emulator's sink (over
 * HTTP), archived in R2 and reconciled against the usage history. The consumer's own
 * paths (a sink failing then recovering, a wrong signing key, the dead-letter queue)
 * are driven with batches made here, against the real sink, archive and TenantGuard;
 * and a replay re-sends a range with the same ids.
 */
import { createExecutionContext, createMessageBatch, getQueueResult } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { dayName } from '../src/billing/archive';
import { MINUTE_EVENT, REQUEST_EVENT } from '../src/billing/events';
import worker from '../src/index';
import { guardFor } from '../src/objects/tenant/tenant-guard';
import type { UsageMessage, UsageRecord } from '../src/types/billing';
import type { Bindings } from '../src/types/context';
import {
  ADMIN_TOKEN,
  admin,
  asTenant,
  createTenant,
  envelope,
  expectRefusal,
  gateway,
  gatewayWith,
  platformKeys,
  type TestTenant,
  testEnv,
  UPSTREAM,
  until,
} from './helpers';

interface SinkView {
  down: boolean;
  unique: number;
  repeats: number;
  received: number;
  deliveries: { events: number; status: number; kid: string | null; verified: boolean | null }[];
  events: { id: string; subject: string; type: string; [k: string]: any }[];
}

/** What a sink of the emulator received, for one tenant. */
async function sinkOf(name: string, tenant?: string): Promise<SinkView> {
  const q = tenant ? `?subject=${tenant}` : '';
  return (await fetch(`${UPSTREAM}/__emulator/usage/${name}${q}`)).json();
}

async function setDown(name: string, down: boolean) {
  await fetch(`${UPSTREAM}/__emulator/usage/${name}/down`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ down }),
  });
}

async function exportStatus(t: TestTenant, archive = false) {
  const res = await admin(`/tenants/${t.id}/usage/export${archive ? '?archive=true' : ''}`);
  expect(res.status).toBe(200);
  return (await envelope(res)).data;
}

/** The shared sink every test's requests reach through the real queue (vitest.config.ts). */
const SHARED = 'tests';

describe('one usage event per billable request', () => {
  it('reaches the sink with the documented fields, signed, and nothing secret', async () => {
    const t = await createTenant(undefined, 'export', ['full', 'usage:read']);
    const plan = `export-${crypto.randomUUID().slice(0, 8)}`;
    await admin(`/plans/${plan}`, {
      method: 'PUT',
      body: JSON.stringify({ policies: [{ name: 'burst', limit: 1000, window_s: 60 }], quota: {} }),
    });
    await admin(`/tenants/${t.id}`, { method: 'PATCH', body: JSON.stringify({ plan }) });
    // Billable: three reads (the second a cache hit), one with the gateway's own request id.
    const first = await asTenant(t, '/team/lists?page_size=2');
    const hit = await asTenant(t, '/team/lists?page_size=2');
    const own = await gateway('/agent/lists', { headers: { authorization: `Bearer ${t.token}` } });
    expect([first.res.status, hit.res.status, own.status]).toEqual([200, 200, 200]);
    const ownId = own.headers.get('x-request-id') ?? '';
    // Not billable: refused by validation, and self-service.
    await expectRefusal(await asTenant(t, '/team/lists?page_size=500'), 'VALIDATION_FAILED');
    expect((await asTenant(t, '/usage')).res.status).toBe(200);

    await until(async () => (await sinkOf(SHARED, t.id)).unique >= 3, 'three events', 30_000);
    const sink = await sinkOf(SHARED, t.id);
    expect(sink.unique).toBe(3);
    const byRequest = new Map(sink.events.map((e) => [e.data.request_id, e]));
    const e1 = byRequest.get(first.id);
    expect(e1).toMatchObject({
      specversion: '1.0',
      source: 'agent-platform-gateway',
      type: REQUEST_EVENT,
      subject: t.id,
      datacontenttype: 'application/json',
      data: {
        request_id: first.id,
        token_id: t.tokenId,
        operation: 'team.list',
        plan,
        status: 200,
        cost: 1,
        cache: 'MISS',
        via: 'http',
      },
    });
    // The caller chose X-Request-ID: the event id is it with the gateway's suffix.
    expect(e1?.id).toMatch(new RegExp(`^${first.id}\\.[0-9a-f]{8}$`));
    expect(e1?.data.bytes).toBeGreaterThan(0);
    expect(e1?.data.duration_ms).toBeGreaterThanOrEqual(0);
    expect(Date.parse(e1?.time)).toBeGreaterThan(Date.now() - 60_000);
    expect(byRequest.get(hit.id)?.data.cache).toMatch(/^(L1|HIT)$/);
    // The gateway made this request's id: the event's id is the request id itself.
    expect(byRequest.get(ownId)?.id).toBe(ownId);
    // Every batch was signed with the key's id, and the sink's check passed.
    const signed = sink.deliveries.filter((d) => d.status === 200);
    expect(signed.length).toBeGreaterThan(0);
    for (const d of signed) expect(d).toMatchObject({ kid: 'k1', verified: true });
    // Nothing secret: not the token, the platform key, the operator token, the sink's key.
    const text = JSON.stringify(sink.events);
    for (const secret of [t.token, platformKeys.demo, ADMIN_TOKEN, testEnv.USAGE_SINK_SECRET]) {
      expect(text).not.toContain(String(secret));
    }

    // Reconciled: the history's billable requests, what the consumer reported, the archive.
    await until(
      async () => (await exportStatus(t)).days[0]?.billable === 3,
      'the history to hold the requests',
      20_000,
    );
    const day = (await exportStatus(t, true)).days[0];
    expect(day).toMatchObject({
      day: dayName(Date.now()),
      billable: 3,
      delivered: 3,
      dead: 0,
      backlog: 0,
      archived: { delivered: 3, dead: 0 },
    });
    expect(day.lag_ms).toBeGreaterThanOrEqual(0);
  }, 60_000);

  it('an MCP tool call is an event with via mcp', async () => {
    const t = await createTenant();
    const res = await gateway('/mcp', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${t.token}`,
        'content-type': 'application/json',
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'agent.list', arguments: {} },
      }),
    });
    expect(res.status).toBe(200);
    const rid = res.headers.get('x-request-id');
    await until(async () => (await sinkOf(SHARED, t.id)).unique >= 1, 'the event', 30_000);
    const [event] = (await sinkOf(SHARED, t.id)).events;
    expect(event?.id).toBe(rid);
    expect(event?.data).toMatchObject({ operation: 'agent.list', via: 'mcp', status: 200 });
  }, 40_000);
});

/** Messages as the request log makes them, for a tenant, `n` of them, a minute apart. */
function records(t: TestTenant, n: number, at = Date.now() - 3_600_000): UsageRecord[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `${t.id}-req-${i}`,
    rid: `${t.id}-req-${i}`,
    at: at + i * 60_000,
    tenant: t.id,
    token: t.tokenId,
    op: 'team.list',
    plan: null,
    status: 200,
    cost: 1,
    ms: 12,
    bytes: 345,
    cache: 'MISS',
    via: 'http',
  }));
}

/** Runs the Worker's queue handler on a batch, as the queue would, with `env` changed. */
async function consume(
  queue: string,
  messages: UsageMessage[],
  attempts: number,
  env: Partial<Bindings>,
) {
  const batch = createMessageBatch<UsageMessage>(
    queue,
    messages.map((body, i) => ({ id: `m${i}`, timestamp: new Date(), attempts, body })),
  );
  const ctx = createExecutionContext();
  await worker.queue(batch, { ...testEnv, ...env });
  return getQueueResult(batch, ctx);
}

const sinkAt = (name: string) => ({ USAGE_SINK_URL: `${UPSTREAM}/__emulator/usage/${name}` });

describe('the consumer', () => {
  it('retries with backoff while the sink is down, and loses nothing once it is back', async () => {
    const t = await createTenant();
    const name = `flaky-${crypto.randomUUID()}`;
    const messages = records(t, 30);
    await setDown(name, true);
    for (const attempts of [1, 2, 3]) {
      const down = await consume('usage-events', messages, attempts, sinkAt(name));
      // Not acknowledged: tried again later (after 1, 2, 4 s here: src/billing/sink.test.ts).
      expect(down.ackAll).toBe(false);
      expect(down.retryBatch.retry).toBe(true);
    }
    // Nothing delivered, nothing archived (these requests are not in the history: no day shows).
    expect((await exportStatus(t, true)).days).toEqual([]);
    expect((await sinkOf(name)).received).toBe(0);
    await setDown(name, false);
    const back = await consume('usage-events', messages, 4, sinkAt(name));
    expect(back.ackAll).toBe(true);
    // Delivered once more by the queue (an acknowledgement lost): a repeated id, no more.
    await consume('usage-events', messages, 1, sinkAt(name));
    const sink = await sinkOf(name, t.id);
    expect(sink.unique).toBe(30);
    expect(sink.repeats).toBe(30);
    expect(new Set(sink.events.map((e) => e.id))).toEqual(new Set(messages.map((m) => m.id)));
    const days = (await exportStatus(t, true)).days;
    const delivered = days.reduce((n: number, d: any) => n + d.archived.delivered, 0);
    // The repeat overwrote its own archived batch: each event is archived once.
    expect(delivered).toBe(30);
  });

  it("delivers an isolate's packs of events in sink batches of at most 100, each event once", async () => {
    const t = await createTenant();
    const name = `packs-${crypto.randomUUID()}`;
    const all = records(t, 150);
    const packs: UsageMessage[] = [
      { kind: 'pack', records: all.slice(0, 100) },
      { kind: 'pack', records: all.slice(100) },
    ];
    const result = await consume('usage-events', packs, 1, sinkAt(name));
    expect(result.ackAll).toBe(true);
    const sink = await sinkOf(name, t.id);
    expect(sink.deliveries.map((d) => d.events)).toEqual([100, 50]);
    expect(sink.unique).toBe(150);
    expect(sink.repeats).toBe(0);
    expect(sink.events.map((e) => e.id)).toEqual(all.map((r) => r.id));
    const days = (await exportStatus(t, true)).days;
    expect(days.reduce((n: number, d: any) => n + d.archived.delivered, 0)).toBe(150);
  });

  it('signs with the configured key: a sink checking another key refuses, and nothing is lost', async () => {
    const t = await createTenant();
    const name = `signed-${crypto.randomUUID()}`;
    const wrong = await consume('usage-events', records(t, 2), 1, {
      ...sinkAt(name),
      USAGE_SINK_SECRET: 'another-key-that-the-sink-does-not-know-0000',
    });
    expect(wrong.retryBatch.retry).toBe(true);
    const right = await consume('usage-events', records(t, 2), 2, sinkAt(name));
    expect(right.ackAll).toBe(true);
    const sink = await sinkOf(name);
    expect(sink.deliveries.map((d) => [d.status, d.verified])).toEqual([
      [401, false],
      [200, true],
    ]);
  });

  it('archives dead letters, counts them, and a replay delivers them', async () => {
    const t = await createTenant();
    const name = `dead-${crypto.randomUUID()}`;
    const messages = records(t, 5);
    const dead = await consume('usage-events-dlq', messages, 11, sinkAt(name));
    expect(dead.ackAll).toBe(true);
    // Dead letters never reach the sink from the dead-letter queue.
    expect((await sinkOf(name)).received).toBe(0);
    let status = await exportStatus(t, true);
    expect(status.days[0]).toMatchObject({ dead: 5, delivered: 0, archived: { dead: 5 } });

    const day = dayName(messages[0]?.at ?? 0);
    const res = await gatewayAdminWith(sinkAt(name), `/tenants/${t.id}/usage/replay`, {
      from: day,
      to: day,
    });
    expect(res.status).toBe(200);
    expect((await envelope(res)).data).toMatchObject({ sent: 5, recovered: 5, cursor: null });
    expect((await sinkOf(name, t.id)).unique).toBe(5);
    status = await exportStatus(t, true);
    expect(status.days[0]).toMatchObject({
      dead: 0,
      delivered: 5,
      replayed: 5,
      archived: { dead: 0, delivered: 5 },
    });
  });
});

/** The operator API with some settings changed (the replay's sink). */
async function gatewayAdminWith(env: Partial<Bindings>, path: string, body: unknown) {
  const ctx = createExecutionContext();
  const res = await worker.fetch(
    new Request(`https://gateway.test/admin${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }),
    { ...testEnv, ...env },
    ctx,
  );
  return res;
}

describe('replay', () => {
  it('re-sends a range with the same ids, in steps', async () => {
    const t = await createTenant();
    const name = `replay-${crypto.randomUUID()}`;
    const start = Date.parse(`${dayName(Date.now() - 2 * 86_400_000)}T00:00:00Z`);
    // 2,500 events over two days, in delivered batches of 50 (29 archived on the first day).
    const messages = records(t, 2500, start);
    for (let i = 0; i < messages.length; i += 50) {
      const result = await consume('usage-events', messages.slice(i, i + 50), 1, sinkAt(name));
      expect(result.ackAll).toBe(true);
    }
    expect((await sinkOf(name, t.id)).unique).toBe(2500);
    // The range: the first day only (1,440 events), in steps of at most 20 batches.
    const day = dayName(start);
    let cursor: string | undefined;
    let sent = 0;
    let steps = 0;
    do {
      const res = await gatewayAdminWith(sinkAt(name), `/tenants/${t.id}/usage/replay`, {
        from: day,
        to: day,
        ...(cursor ? { cursor } : {}),
      });
      const step = (await envelope(res)).data;
      expect(res.status).toBe(200);
      expect(step.batches).toBeLessThanOrEqual(20);
      sent += step.sent;
      cursor = step.cursor ?? undefined;
      steps++;
    } while (cursor);
    expect(sent).toBe(1440);
    expect(steps).toBeGreaterThan(1);
    const sink = await sinkOf(name, t.id);
    expect(sink.unique).toBe(2500);
    expect(sink.repeats).toBe(1440);
    const replayed = sink.events.filter((e) => e.time.startsWith(day));
    expect(replayed).toHaveLength(1440);
  }, 60_000);

  it('says the sink failed, and what it took, when it is down', async () => {
    const t = await createTenant();
    const name = `replay-down-${crypto.randomUUID()}`;
    await consume('usage-events', records(t, 3), 1, sinkAt(name));
    await setDown(name, true);
    const day = dayName(Date.now() - 3_600_000);
    const res = await gatewayAdminWith(sinkAt(name), `/tenants/${t.id}/usage/replay`, {
      from: day,
      to: dayName(Date.now()),
    });
    expect(res.status).toBe(502);
    const body = await envelope(res);
    expect(body).toMatchObject({ code: 50207, data: { why: 'HTTP 503', sent: 0 } });
  });

  it('refuses a range over 31 days, or reversed', async () => {
    const t = await createTenant();
    const far = await admin(`/tenants/${t.id}/usage/replay`, {
      method: 'POST',
      body: JSON.stringify({ from: '2026-01-01', to: '2026-03-01' }),
    });
    await expectRefusal(far, 'VALIDATION_FAILED');
    const reversed = await admin(`/tenants/${t.id}/usage/export?from=2026-03-02&to=2026-03-01`);
    await expectRefusal(reversed, 'VALIDATION_FAILED');
  });
});

// A tenant's export status is the console's view (ui/console): the same operation.
void platformKeys;

describe('aggregate mode', () => {
  it('sends one event per tenant, token and operation a minute, its id made from them', async () => {
    const t = await createTenant();
    await admin(`/tenants/${t.id}/limits`, {
      method: 'PUT',
      body: JSON.stringify({ policies: [], quota: { daily: 1000 }, limiter: 'exact' }),
    });
    const aggregate = { USAGE_EXPORT: 'aggregate' };
    const as = (path: string, env: Partial<Bindings> = aggregate) =>
      gatewayWith(env, path, { headers: { authorization: `Bearer ${t.token}` } });
    for (let i = 0; i < 4; i++) expect((await as('/team/lists')).status).toBe(200);
    // Exact mode: the next request's guard call carries the four's sums to the TenantGuard.
    expect((await as('/agent/lists', {})).status).toBe(200);
    const minute = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    const part = guardFor(testEnv, t.id).export();
    await part.produceClosed(Date.now() + 3 * 60_000);
    const id = `${t.id}/${t.tokenId}/team.list/${minute.toISOString()}`;
    await until(
      async () => (await sinkOf(SHARED, t.id)).events.some((e) => e.id === id),
      'the minute',
      30_000,
    );
    const event = (await sinkOf(SHARED, t.id)).events.find((e) => e.id === id);
    expect(event).toMatchObject({
      type: MINUTE_EVENT,
      subject: t.id,
      time: minute.toISOString(),
      data: {
        token_id: t.tokenId,
        operation: 'team.list',
        requests: 4,
        cost: 4,
        errors: 0,
        revision: 0,
      },
    });
    // A request of that minute arriving after it went: a revision, with its own id.
    expect((await as('/team/lists')).status).toBe(200);
    expect((await as('/agent/lists', {})).status).toBe(200);
    await part.produceClosed(Date.now() + 3 * 60_000);
    const minutes = async () =>
      (await sinkOf(SHARED, t.id)).events.filter(
        (e) => e.type === MINUTE_EVENT && e.data.operation === 'team.list',
      );
    await until(async () => (await minutes()).length === 2, 'the late request', 30_000);
    const late = (await minutes()).find((e) => e.id !== id);
    expect(late?.data.requests).toBe(1);
    // Still the same minute: its revision 1; else the next minute's first event.
    if (late?.time === minute.toISOString()) {
      expect(late).toMatchObject({ id: `${id}/1`, data: { revision: 1 } });
    } else {
      expect(late?.data.revision).toBe(0);
    }
  }, 60_000);
});
