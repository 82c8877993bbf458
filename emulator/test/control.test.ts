// The control endpoints under /__emulator: health, the request log, reset,
// the webhook receiver, and the latency option.
import { describe, expect, it } from 'vitest';
import { DEMO_PLATFORM_KEY, FIRST_FREE_KEY_ID } from '../seed';
import type { Fault, RecordedRequest, WebhookDelivery } from '../store';
import type { ApiKey, NewApiKey, NewSession, Paged, Session } from '../types';
import { auth, first, seeded, useEmulator, xKey } from './client';

const emu = useEmulator({ resetEach: true });
const demo = auth(DEMO_PLATFORM_KEY);
const requests = (requestId?: string) =>
  emu.control<RecordedRequest[]>(
    'GET',
    requestId === undefined ? '/requests' : `/requests?request_id=${requestId}`,
  );

describe('health', () => {
  it('answers {ok:true}', async () => {
    expect(await emu.control('GET', '/health')).toEqual({ ok: true });
  });
});

describe('request log', () => {
  it('records a request exactly as received: method, path, query, lower-case headers, raw body', async () => {
    await emu.fetch('POST', '/user/apikey/new?x=1', {
      headers: { Authorization: DEMO_PLATFORM_KEY, 'X-Custom': 'Yes' },
      body: '{"name":"rec"}',
      requestId: 'rid-rec-1',
    });
    const [rec, ...more] = await requests('rid-rec-1');
    expect(more).toEqual([]);
    expect(rec).toMatchObject({
      method: 'POST',
      path: '/user/apikey/new',
      query: { x: '1' },
      body: '{"name":"rec"}',
    });
    expect(rec?.headers).toMatchObject({
      authorization: DEMO_PLATFORM_KEY,
      'content-type': 'application/json',
      'x-custom': 'Yes',
      'x-request-id': 'rid-rec-1',
    });
    expect(Date.now() - Date.parse(rec?.at ?? '')).toBeLessThan(10_000);
  });

  it('records a GET with a null body and every query parameter, unknown ones too', async () => {
    await emu.fetch('GET', '/team/lists?page_num=1&extra=yes', {
      headers: demo,
      requestId: 'rid-rec-2',
    });
    const [rec] = await requests('rid-rec-2');
    expect(rec).toMatchObject({
      method: 'GET',
      body: null,
      query: { page_num: '1', extra: 'yes' },
    });
  });

  it('records refused and unknown requests too, in order, with rising seq', async () => {
    await emu.fetch('GET', '/team/lists', { requestId: 'rid-rec-3' });
    await emu.fetch('DELETE', '/no/such', { requestId: 'rid-rec-3' });
    await emu.fetch('GET', '/agent/lists', { headers: xKey('bad'), requestId: 'rid-rec-3' });
    const recs = await requests('rid-rec-3');
    expect(recs.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /team/lists',
      'DELETE /no/such',
      'GET /agent/lists',
    ]);
    expect(recs.map((r) => r.seq)).toEqual([...recs.map((r) => r.seq)].sort((a, b) => a - b));
    expect(new Set(recs.map((r) => r.seq)).size).toBe(3);
  });

  it('filters on the exact x-request-id, lists all without one, never records control calls', async () => {
    await emu.fetch('GET', '/team/lists', { headers: demo, requestId: 'rid-a' });
    await emu.fetch('GET', '/team/lists', { headers: demo, requestId: 'rid-ab' });
    await emu.fetch('GET', '/team/lists', { headers: demo });
    await emu.control('GET', '/health');
    await emu.control('GET', '/faults');
    expect(await requests('rid-a')).toHaveLength(1);
    expect(await requests('rid-')).toEqual([]);
    const all = await requests();
    expect(all).toHaveLength(3);
    expect(all.some((r) => r.path.startsWith('/__emulator'))).toBe(false);
  });

  it('is cleared by DELETE', async () => {
    await emu.fetch('GET', '/team/lists', { headers: demo });
    expect(await emu.control('DELETE', '/requests')).toEqual({ ok: true });
    expect(await requests()).toEqual([]);
  });
});

describe('reset', () => {
  it('brings the seeded state back and clears records, faults and webhooks', async () => {
    const { api_key } = await emu.data<NewApiKey>('POST', '/user/apikey/new', {
      headers: demo,
      body: { name: 'temp' },
    });
    await emu.data('DELETE', '/user/apikey/delete/2', { headers: demo });
    const { session_id } = await emu.data<NewSession>('POST', '/session/create', {
      headers: xKey(DEMO_PLATFORM_KEY),
      body: { team_id: first(seeded.demo.teams).team_id },
    });
    const seededSession = first(seeded.demo.sessions);
    await emu.data('PUT', `/session/info/${seededSession.session_id}`, {
      headers: xKey(DEMO_PLATFORM_KEY),
      body: { title: 'changed' },
    });
    await emu.control('POST', '/faults', { path: '/nothing', kind: 'html' });
    await emu.control('POST', '/webhooks/r', { hello: 1 });
    const before = await requests();

    expect(await emu.control('POST', '/reset')).toEqual({ ok: true });

    expect(await requests()).toEqual([]);
    expect(await emu.control('GET', '/faults')).toEqual([]);
    expect(await emu.control('GET', '/webhooks/r')).toEqual([]);
    expect((await emu.fetch('GET', '/team/lists', { headers: auth(api_key) })).status).toBe(401);
    const keys = await emu.data<Paged<ApiKey>>('GET', '/user/apikey/lists', { headers: demo });
    expect(keys.data.map((k) => k.id)).toEqual([1, 2]);
    const notFound = await emu.envelope('GET', `/session/info/${session_id}`, {
      headers: xKey(DEMO_PLATFORM_KEY),
    });
    expect(notFound.body.code).toBe(10404);
    const restored = await emu.data<Session>('GET', `/session/info/${seededSession.session_id}`, {
      headers: xKey(DEMO_PLATFORM_KEY),
    });
    expect(restored.name).toBe(seededSession.name);
    // New keys get ids from the start again; record numbers keep rising.
    await emu.data('POST', '/user/apikey/new', { headers: demo, body: { name: 'again' } });
    const again = await emu.data<Paged<ApiKey>>('GET', '/user/apikey/lists', { headers: demo });
    expect(again.data.map((k) => k.id)).toEqual([1, 2, FIRST_FREE_KEY_ID]);
    const [firstAfter] = await requests();
    const lastBefore = before.at(-1);
    expect(firstAfter?.seq ?? 0).toBeGreaterThan(lastBefore?.seq ?? Number.POSITIVE_INFINITY);
  });
});

describe('webhook receiver', () => {
  const deliveries = (name: string) => emu.control<WebhookDelivery[]>('GET', `/webhooks/${name}`);
  const deliver = (name: string, body: string, headers: Record<string, string> = {}) =>
    emu.fetch('POST', `/__emulator/webhooks/${name}`, { body, headers });

  it('records each delivery: lower-case headers, the raw body, the time; answers {ok:true}', async () => {
    const reply = await deliver('alerts', '{"threshold":80}', { 'X-Signature': 'sig' });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.text)).toEqual({ ok: true });
    await deliver('alerts', 'second');
    const got = await deliveries('alerts');
    expect(got.map((d) => [d.body, d.failed])).toEqual([
      ['{"threshold":80}', false],
      ['second', false],
    ]);
    expect(first(got).headers).toMatchObject({
      'x-signature': 'sig',
      'content-type': 'application/json',
    });
    expect(Date.now() - Date.parse(first(got).received_at)).toBeLessThan(10_000);
  });

  it('keeps receivers apart; an unknown one has no deliveries; DELETE forgets one', async () => {
    await deliver('one', 'a');
    await deliver('two', 'b');
    expect((await deliveries('one')).map((d) => d.body)).toEqual(['a']);
    expect((await deliveries('two')).map((d) => d.body)).toEqual(['b']);
    expect(await deliveries('none')).toEqual([]);
    expect(await emu.control('DELETE', '/webhooks/one')).toEqual({ ok: true });
    expect(await deliveries('one')).toEqual([]);
    expect(await deliveries('two')).toHaveLength(1);
  });

  it('fails the next N deliveries with the given status (default 500), recording them as failed', async () => {
    expect(await emu.control('POST', '/webhooks/flaky/fail', { times: 2, status: 503 })).toEqual({
      ok: true,
    });
    const statuses: number[] = [];
    for (const body of ['1', '2', '3']) {
      const reply = await deliver('flaky', body);
      statuses.push(reply.status);
      if (reply.status !== 200) expect(JSON.parse(reply.text)).toEqual({ ok: false });
    }
    expect(statuses).toEqual([503, 503, 200]);
    expect((await deliveries('flaky')).map((d) => d.failed)).toEqual([true, true, false]);
    await emu.control('POST', '/webhooks/flaky/fail', { times: 1 });
    expect((await deliver('flaky', '4')).status).toBe(500);
    await emu.control('POST', '/webhooks/flaky/fail', { times: 0 });
    expect((await deliver('flaky', '5')).status).toBe(200);
  });

  it.each([
    [{}],
    [{ times: -1 }],
    [{ times: 1.5 }],
    [{ times: '2' }],
    [{ times: 1, status: 200 }],
    [{ times: 1, status: 600 }],
    [{ times: 1, status: 304 }],
    ['not json'],
  ])('refuses the fail setting %j with 400', async (body) => {
    const reply = await emu.fetch('POST', '/__emulator/webhooks/x/fail', { body });
    expect(reply.status).toBe(400);
    expect(JSON.parse(reply.text)).toMatchObject({ code: 10400, data: null });
  });

  it('is neither recorded nor hit by faults', async () => {
    await emu.control('POST', '/faults', { kind: 'status', status: 503 });
    expect((await deliver('quiet', 'x')).status).toBe(200);
    expect(await requests()).toEqual([]);
    expect(await emu.control<Fault[]>('GET', '/faults')).toHaveLength(1);
  });
});

describe('latency option', () => {
  const slow = useEmulator({ latencyMs: 250 });

  it('delays platform answers but not control answers', async () => {
    let t = Date.now();
    await slow.data('GET', '/team/lists', { headers: demo });
    expect(Date.now() - t).toBeGreaterThanOrEqual(240);
    t = Date.now();
    await slow.control('GET', '/health');
    expect(Date.now() - t).toBeLessThan(200);
  });
});
