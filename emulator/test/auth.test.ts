// Every platform route with the one header it reads the key from (4.1–4.6:
// Authorization, raw or Bearer; 4.7, 4.8 and the current client's: x-api-key, raw; the
// upload has its own test, dashboard.test.ts), and the 401s
// and 404s a client gets otherwise.
import { describe, expect, it } from 'vitest';
import type { KeyHeader } from '../auth';
import { opaqueIdFrom } from '../dashboard-seed';
import { DEMO_PLATFORM_KEY, DEMO_SECOND_KEY } from '../seed';
import {
  type CallOptions,
  first,
  NOT_FOUND_TEXT,
  seeded,
  UNAUTHORIZED_TEXT,
  useEmulator,
} from './client';

const emu = useEmulator({ resetEach: true });

const team = first(seeded.demo.teams);
const agent = first(team.agents);
const session = first(seeded.demo.sessions);
const browser = first(seeded.demo.browsers);
const firstMessage = first(session.messages);

interface Route {
  method: string;
  path: string;
  header: KeyHeader;
  body?: unknown;
}

const ROUTES: Route[] = [
  { method: 'POST', path: '/user/apikey/new', header: 'authorization', body: { name: 'auth' } },
  { method: 'DELETE', path: '/user/apikey/delete/2', header: 'authorization' },
  { method: 'GET', path: '/user/apikey/lists', header: 'authorization' },
  { method: 'GET', path: '/user/call/filter_values', header: 'authorization' },
  { method: 'GET', path: '/team/lists', header: 'authorization' },
  { method: 'GET', path: `/team/info/${team.team_id}`, header: 'authorization' },
  { method: 'GET', path: '/user/call/lists', header: 'x-api-key' },
  { method: 'GET', path: '/agent/lists', header: 'x-api-key' },
  { method: 'GET', path: `/agent/info/${agent.agent_id}`, header: 'x-api-key' },
  {
    method: 'POST',
    path: '/session/create',
    header: 'x-api-key',
    body: { team_id: team.team_id, task: 'auth' },
  },
  { method: 'GET', path: `/session/info/${session.session_id}`, header: 'x-api-key' },
  {
    method: 'PUT',
    path: `/session/info/${session.session_id}`,
    header: 'x-api-key',
    body: { title: 'auth' },
  },
  {
    method: 'GET',
    path: `/session/message/lists?session_id=${session.session_id}`,
    header: 'x-api-key',
  },
  {
    method: 'GET',
    path: `/session/message/between?session_id=${session.session_id}&from_message_id=${firstMessage.message_id}&to_message_id=${firstMessage.message_id}`,
    header: 'x-api-key',
  },
  { method: 'GET', path: `/browser/info/${browser.browser_id}`, header: 'x-api-key' },
  { method: 'GET', path: '/browser/lists', header: 'x-api-key' },
  { method: 'DELETE', path: `/browser/release/${browser.browser_id}`, header: 'x-api-key' },
  {
    method: 'GET',
    path: `/browser/page/lists?browser_id=${browser.browser_id}`,
    header: 'x-api-key',
  },
  // The current client (PLATFORM.md, version 0.3.2): x-api-key on every call.
  { method: 'POST', path: '/session/create', header: 'x-api-key', body: { task: 'auth' } },
  { method: 'GET', path: `/session/marketing/data/${session.session_id}`, header: 'x-api-key' },
  {
    method: 'POST',
    path: '/dashboard/product/create',
    header: 'x-api-key',
    body: { product: 'p' },
  },
  {
    method: 'GET',
    path: `/dashboard/product/candidates/${opaqueIdFrom('prod', 'demo:product:1')}/info`,
    header: 'x-api-key',
  },
  {
    method: 'GET',
    path: `/dashboard/product/query/results/${opaqueIdFrom('qry', 'demo:query:1')}/lists`,
    header: 'x-api-key',
  },
  {
    method: 'GET',
    path: `/dashboard/report/info/${opaqueIdFrom('rep', 'demo:report:1')}`,
    header: 'x-api-key',
  },
  {
    method: 'POST',
    path: `/dashboard/report/update/${opaqueIdFrom('rep', 'demo:report:1')}`,
    header: 'x-api-key',
    body: { keywords: ['auth'] },
  },
  { method: 'GET', path: '/dashboard/categories', header: 'x-api-key' },
];

const other = (header: KeyHeader): KeyHeader =>
  header === 'authorization' ? 'x-api-key' : 'authorization';

describe.each(ROUTES)('$method $path ($header)', (route) => {
  const send = (headers: Record<string, string>): CallOptions =>
    route.body === undefined ? { headers } : { headers, body: route.body };

  it('answers 401 without a key, with the key in the other header, or with an unknown key', async () => {
    for (const headers of [
      {},
      { [other(route.header)]: DEMO_PLATFORM_KEY },
      { [route.header]: 'sk-emu-0000000000000000000000000000000000000000' },
      { [route.header]: '' },
    ]) {
      const reply = await emu.fetch(route.method, route.path, send(headers));
      expect(reply.status).toBe(401);
      expect(reply.contentType).toMatch(/^application\/json/);
      expect(reply.text).toBe(UNAUTHORIZED_TEXT);
    }
  });

  it('succeeds with the raw key in its header', async () => {
    await emu.data(route.method, route.path, send({ [route.header]: DEMO_PLATFORM_KEY }));
  });

  if (route.header === 'authorization')
    it('accepts "Bearer <key>" in Authorization, in any case', async () => {
      await emu.data(
        route.method,
        route.path,
        send({ authorization: `Bearer ${DEMO_PLATFORM_KEY}` }),
      );
      await emu.control('POST', '/reset'); // the first call may have deleted key 2
      await emu.data(
        route.method,
        route.path,
        send({ authorization: `bearer  ${DEMO_SECOND_KEY}` }),
      );
    });
  else
    it('takes x-api-key raw: "Bearer <key>" there is a 401', async () => {
      const reply = await emu.fetch(
        route.method,
        route.path,
        send({ 'x-api-key': `Bearer ${DEMO_PLATFORM_KEY}` }),
      );
      expect(reply.status).toBe(401);
    });
});

describe('unknown routes', () => {
  it('answers an unknown path or method with the 404 envelope, key or not', async () => {
    for (const [method, path, headers] of [
      ['GET', '/no/such/route', { authorization: DEMO_PLATFORM_KEY }],
      ['GET', '/no/such/route', {}],
      ['PATCH', '/team/lists', { authorization: DEMO_PLATFORM_KEY }],
      ['POST', '/agent/lists', { 'x-api-key': DEMO_PLATFORM_KEY }],
    ] as const) {
      const reply = await emu.fetch(method, path, { headers });
      expect(reply.status).toBe(404);
      expect(reply.text).toBe(NOT_FOUND_TEXT);
    }
  });

  it('tells a plain GET of the session stream to upgrade (426)', async () => {
    const msg = await emu.failure(
      'GET',
      `/session/ws/${session.session_id}`,
      {},
      { status: 426, code: 426 },
    );
    expect(msg).toMatch(/WebSocket/);
  });

  it('a refused request changes nothing: a key created without auth does not exist', async () => {
    await emu.fetch('POST', '/user/apikey/new', { body: { name: 'nope' } });
    const keys = await emu.data<{ total: number }>('GET', '/user/apikey/lists', {
      headers: { authorization: DEMO_PLATFORM_KEY },
    });
    expect(keys.total).toBe(2);
  });
});
