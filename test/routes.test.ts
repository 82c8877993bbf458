/**
 * Every route of the table, happy path, over real HTTP to the emulator: the
 * caller gets the platform's envelope and the platform got the right method,
 * path, query, body and the platform key in the route's header.
 */
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { configureOperation } from '../src/operations/overrides';
import { BUILT_IN_OPERATIONS } from '../src/operations/table';
import {
  asTenant,
  countExactly,
  createTenant,
  platformKeys,
  type TestTenant,
  upstreamSaw,
} from './helpers';

interface Case {
  method: string;
  path: string;
  json?: unknown;
  /** A body sent as it is (an upload), with its content type. */
  body?: string;
  contentType?: string;
  /** What the emulator must have received as the body's text. */
  upstreamText?: string;
  /** What the emulator must have received. */
  upstreamPath: string;
  upstreamQuery?: Record<string, string>;
  upstreamBody?: unknown;
}

let tenant: TestTenant;
const dashboard = inject('demoDashboard');
const ids = {
  product: '',
  team: '',
  agent: '',
  session: '',
  seededSession: '',
  browser: '',
  message1: '',
  message2: '',
  apiKey: 0,
};

beforeAll(async () => {
  // The API key routes need an explicit grant; apikeys:admin also sees keys unmasked.
  tenant = await createTenant(platformKeys.demo, 'routes', ['full', 'apikeys:admin']);
  const teams = (await asTenant(tenant, '/team/lists')).body.data.data;
  ids.team = teams[0].team_id;
  ids.agent = (await asTenant(tenant, '/agent/lists')).body.data.data[0].agent_id;
  ids.session = (
    await asTenant(tenant, '/session/create', {
      method: 'POST',
      json: { team_id: ids.team, task: 'seed' },
    })
  ).body.data.session_id;
  const session = (await asTenant(tenant, `/session/info/${ids.session}`)).body.data;
  ids.browser = session.browser_id;
  // Seeded sessions have history; the emulator's call records name them.
  ids.seededSession = (
    await asTenant(tenant, '/user/call/lists?order=asc')
  ).body.data.data[0].session_id;
  const messages = (
    await asTenant(tenant, `/session/message/lists?session_id=${ids.seededSession}`)
  ).body.data.messages;
  [ids.message1, ids.message2] = [messages[0].message_id, messages.at(-1).message_id];
  const seeded = (await asTenant(tenant, '/team/lists')).body.data;
  expect(seeded.total).toBeGreaterThan(0);
  await asTenant(tenant, '/user/apikey/new', { method: 'POST', json: { name: 'to-delete' } });
  const keys = (await asTenant(tenant, '/user/apikey/lists?page_size=100')).body.data.data;
  ids.apiKey = keys.find((k: { name: string }) => k.name === 'to-delete').id;
  ids.product = (
    await asTenant(tenant, '/dashboard/product/create', {
      method: 'POST',
      json: { product: 'Seed product' },
    })
  ).body.data.product_id;
});

const cases: Record<string, () => Case> = {
  'apikey.create': () => ({
    method: 'POST',
    path: '/user/apikey/new',
    json: { name: 'ci' },
    upstreamPath: '/user/apikey/new',
    upstreamBody: { name: 'ci' },
  }),
  'apikey.delete': () => ({
    method: 'DELETE',
    path: `/user/apikey/delete/${ids.apiKey}`,
    upstreamPath: `/user/apikey/delete/${ids.apiKey}`,
  }),
  'apikey.list': () => ({
    method: 'GET',
    path: '/user/apikey/lists',
    upstreamPath: '/user/apikey/lists',
    upstreamQuery: { page_num: '1', page_size: '10' },
  }),
  'calls.filter_values': () => ({
    method: 'GET',
    path: '/user/call/filter_values',
    upstreamPath: '/user/call/filter_values',
    upstreamQuery: {},
  }),
  'calls.list': () => ({
    method: 'GET',
    path: '/user/call/lists?start_date=2026-09-01&end_date=2026-10-31&order_field=total_cost&order=asc&page_size=5',
    upstreamPath: '/user/call/lists',
    upstreamQuery: {
      page_num: '1',
      page_size: '5',
      platform: 'all',
      start_date: '2026-09-01',
      end_date: '2026-10-31',
      order_field: 'total_cost',
      order: 'asc',
    },
  }),
  'team.list': () => ({
    method: 'GET',
    path: '/team/lists?team_type=user&page_num=1',
    upstreamPath: '/team/lists',
    upstreamQuery: { page_num: '1', page_size: '10', team_type: 'user' },
  }),
  'team.info': () => ({
    method: 'GET',
    path: `/team/info/${ids.team}`,
    upstreamPath: `/team/info/${ids.team}`,
  }),
  'agent.list': () => ({
    method: 'GET',
    path: '/agent/lists?agent_type=all',
    upstreamPath: '/agent/lists',
    upstreamQuery: { agent_type: 'all', page_num: '1', page_size: '10' },
  }),
  'agent.info': () => ({
    method: 'GET',
    path: `/agent/info/${ids.agent}`,
    upstreamPath: `/agent/info/${ids.agent}`,
  }),
  'session.create': () => ({
    method: 'POST',
    path: '/session/create',
    json: { team_id: ids.team, task: 'Find flights', title: 'Trip' },
    upstreamPath: '/session/create',
    upstreamBody: { team_id: ids.team, task: 'Find flights', title: 'Trip' },
  }),
  'session.marketing_data': () => ({
    method: 'GET',
    path: `/session/marketing/data/${ids.session}?type=like`,
    upstreamPath: `/session/marketing/data/${ids.session}`,
    upstreamQuery: { type: 'like' },
  }),
  'session.upload': () => {
    const body = `--b0undary\r\nContent-Disposition: form-data; name="files"; filename="a.txt"\r\n\r\nhello\r\n--b0undary--\r\n`;
    return {
      method: 'POST',
      path: '/session/upload',
      body,
      contentType: 'multipart/form-data; boundary=b0undary',
      upstreamPath: '/session/upload',
      upstreamText: body,
    };
  },
  'product.create': () => ({
    method: 'POST',
    path: '/dashboard/product/create',
    json: {
      product: 'A travel planner',
      attachments: [{ file_name: 'a.txt', file_url: 'https://files.example/a.txt' }],
    },
    upstreamPath: '/dashboard/product/create',
    upstreamBody: {
      product: 'A travel planner',
      attachments: [{ file_name: 'a.txt', file_url: 'https://files.example/a.txt' }],
    },
  }),
  'product.info': () => ({
    method: 'GET',
    path: `/dashboard/product/candidates/${ids.product}/info`,
    upstreamPath: `/dashboard/product/candidates/${ids.product}/info`,
    upstreamQuery: {},
  }),
  'product.query_results': () => ({
    method: 'GET',
    path: `/dashboard/product/query/results/${dashboard.queryId}/lists`,
    upstreamPath: `/dashboard/product/query/results/${dashboard.queryId}/lists`,
  }),
  'report.info': () => ({
    method: 'GET',
    path: `/dashboard/report/info/${dashboard.reportId}`,
    upstreamPath: `/dashboard/report/info/${dashboard.reportId}`,
  }),
  'report.update': () => ({
    method: 'POST',
    path: `/dashboard/report/update/${dashboard.reportId}`,
    json: {
      keywords: ['travel', 'planner'],
      related_industries: [{ level1: { id: 3 }, level2: [301] }],
    },
    upstreamPath: `/dashboard/report/update/${dashboard.reportId}`,
    upstreamBody: {
      keywords: ['travel', 'planner'],
      related_industries: [{ level1: { id: 3 }, level2: [301] }],
    },
  }),
  'report.categories': () => ({
    method: 'GET',
    path: '/dashboard/categories',
    upstreamPath: '/dashboard/categories',
    upstreamQuery: {},
  }),
  'session.info': () => ({
    method: 'GET',
    path: `/session/info/${ids.session}`,
    upstreamPath: `/session/info/${ids.session}`,
  }),
  'session.rename': () => ({
    method: 'PUT',
    path: `/session/info/${ids.session}`,
    json: { title: 'Renamed', session_id: ids.session },
    upstreamPath: `/session/info/${ids.session}`,
    upstreamBody: { title: 'Renamed', session_id: ids.session },
  }),
  'session.messages': () => ({
    method: 'GET',
    path: `/session/message/lists?session_id=${ids.session}&role=user&from_timestamp=2020-01-01T00:00:00Z`,
    upstreamPath: '/session/message/lists',
    upstreamQuery: {
      session_id: ids.session,
      page_num: '1',
      page_size: '20',
      role: 'user',
      from_timestamp: '2020-01-01T00:00:00Z',
    },
  }),
  'session.messages_between': () => ({
    method: 'GET',
    path: `/session/message/between?session_id=${ids.seededSession}&from_message_id=${ids.message1}&to_message_id=${ids.message2}`,
    upstreamPath: '/session/message/between',
    upstreamQuery: {
      session_id: ids.seededSession,
      from_message_id: ids.message1,
      to_message_id: ids.message2,
    },
  }),
  'browser.info': () => ({
    method: 'GET',
    path: `/browser/info/${ids.browser}`,
    upstreamPath: `/browser/info/${ids.browser}`,
  }),
  'browser.list': () => ({
    method: 'GET',
    path: `/browser/lists?session_id=${ids.session}`,
    upstreamPath: '/browser/lists',
    upstreamQuery: { session_id: ids.session, page_num: '1', page_size: '20' },
  }),
  'browser.pages': () => ({
    method: 'GET',
    path: `/browser/page/lists?browser_id=${ids.browser}&page_size=3`,
    upstreamPath: '/browser/page/lists',
    upstreamQuery: { browser_id: ids.browser, page_num: '1', page_size: '3' },
  }),
  'browser.release': () => ({
    method: 'DELETE',
    path: `/browser/release/${ids.browser}`,
    upstreamPath: `/browser/release/${ids.browser}`,
  }),
};

describe('operation table', () => {
  it('has a happy-path case for every one of its 26 operations', () => {
    expect(BUILT_IN_OPERATIONS).toHaveLength(26);
    expect(Object.keys(cases).sort()).toEqual(BUILT_IN_OPERATIONS.map((r) => r.id).sort());
  });

  it('keeps the platform paths and methods', () => {
    for (const spec of BUILT_IN_OPERATIONS)
      expect(configureOperation(spec, {}).upstreamPath).toBe(spec.path);
  });
});

describe.each(BUILT_IN_OPERATIONS.map((spec) => [spec.id, spec] as const))('%s', (id, spec) => {
  it('forwards with the platform key in its header and returns the envelope', async () => {
    const c = cases[id]!();
    // no-cache: cacheable reads must still reach the platform in this test.
    const headers: Record<string, string> = spec.cache ? { 'cache-control': 'no-cache' } : {};
    if (c.contentType) headers['content-type'] = c.contentType;
    const {
      res,
      body,
      id: rid,
    } = await asTenant(tenant, c.path, { method: c.method, json: c.json, body: c.body, headers });

    expect(res.status).toBe(200);
    expect(body).toMatchObject({ code: 0, msg: 'Success' });
    expect(res.headers.get('x-request-id')).toBe(rid);

    const [seen, ...more] = await upstreamSaw(rid);
    expect(more).toHaveLength(0);
    expect(seen!.method).toBe(spec.method);
    expect(seen!.path).toBe(c.upstreamPath);
    if (c.upstreamQuery) expect(seen!.query).toEqual(c.upstreamQuery);
    if (c.upstreamText !== undefined) expect(seen!.body).toBe(c.upstreamText);
    else {
      expect(seen!.body === null || seen!.body === '' ? undefined : JSON.parse(seen!.body)).toEqual(
        c.upstreamBody,
      );
    }

    // The platform key in the route's header, raw; the caller's token nowhere.
    const other = spec.credential === 'authorization' ? 'x-api-key' : 'authorization';
    expect(seen!.headers[spec.credential]).toBe(platformKeys.demo);
    expect(seen!.headers[other]).toBeUndefined();
    expect(JSON.stringify(seen!.headers)).not.toContain(tenant.token);
    expect(seen!.headers['x-request-id']).toBe(rid);
  });
});

describe('session.create in both shapes', () => {
  it("forwards the current client's body, without team_id, as it was sent", async () => {
    const json = {
      task: 'Reply to mentions',
      intent_id: 'intent_42',
      mode: 'marketing',
      platform: 'x',
      extra: { tone: 'friendly', limits: { per_day: 20 } },
    };
    const { res, body, id } = await asTenant(tenant, '/session/create', { method: 'POST', json });
    expect(res.status).toBe(200);
    expect(body.data.session_id).toEqual(expect.any(String));
    const [seen] = await upstreamSaw(id);
    expect(JSON.parse(seen?.body ?? 'null')).toEqual(json);
    const session = await asTenant(tenant, `/session/info/${body.data.session_id}`);
    expect(session.body.data).toMatchObject({ intent_id: 'intent_42', platform: 'x', team_id: '' });
  });

  it("still takes the specification's {team_id, task, title}, with its default task", async () => {
    const { res, id } = await asTenant(tenant, '/session/create', {
      method: 'POST',
      json: { team_id: ids.team },
    });
    expect(res.status).toBe(200);
    const [seen] = await upstreamSaw(id);
    expect(JSON.parse(seen?.body ?? 'null')).toEqual({ team_id: ids.team, task: '' });
  });
});

describe("the current client's operations cost what docs/LIMITS.md says", () => {
  const COSTS: Record<string, number> = {
    'session.marketing_data': 1,
    'session.upload': 3,
    'product.create': 5,
    'product.info': 1,
    'product.query_results': 1,
    'report.info': 1,
    'report.update': 2,
    'report.categories': 1,
  };
  it.each(Object.entries(COSTS))('%s costs %i', async (id, cost) => {
    // Counted exactly: a tenant of its own, one fixed window of 1000 units, exact mode.
    const counted = await createTenant(platformKeys.demo, `cost ${id}`);
    await countExactly(counted);
    const c = cases[id]!();
    const headers: Record<string, string> = { 'cache-control': 'no-store' };
    if (c.contentType) headers['content-type'] = c.contentType;
    const { res } = await asTenant(counted, c.path, {
      method: c.method,
      json: c.json,
      body: c.body,
      headers,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit')).toMatch(new RegExp(`^"units";r=${1000 - cost};`));
  });
});
