/**
 * Every bound of PLATFORM.md is refused before anything goes upstream, with
 * an envelope that names the field and the bound.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { asTenant, createTenant, type TestTenant, upstreamSaw } from './helpers';

const TEAM = '3f6c1e2a-5b7d-4c8e-9f01-23456789abcd';
let tenant: TestTenant;
beforeAll(async () => {
  // The API key routes need an explicit grant.
  tenant = await createTenant(undefined, undefined, ['full', 'apikeys:admin']);
});

interface Bad {
  name: string;
  method?: string;
  path: string;
  json?: unknown;
  body?: string;
  headers?: Record<string, string>;
  status: number;
  code: number;
  /** Text the message must contain: the field and its bound. */
  says: string;
}

const bad: Bad[] = [
  // Paging, on every paged route.
  ...[
    '/user/apikey/lists',
    '/team/lists',
    '/agent/lists',
    '/user/call/lists',
    '/browser/lists',
  ].flatMap((p) => [
    {
      name: `${p} page_num=0`,
      path: `${p}?page_num=0`,
      status: 400,
      code: 40001,
      says: 'page_num must be an integer from 1',
    },
    {
      name: `${p} page_size=101`,
      path: `${p}?page_size=101`,
      status: 400,
      code: 40001,
      says: 'page_size must be an integer from 1 to 100',
    },
  ]),
  {
    name: 'page_size=0',
    path: '/team/lists?page_size=0',
    status: 400,
    code: 40001,
    says: 'page_size must be an integer from 1 to 100',
  },
  {
    name: 'page_size not a number',
    path: '/team/lists?page_size=ten',
    status: 400,
    code: 40001,
    says: 'page_size must be an integer',
  },
  {
    name: 'page_size fraction',
    path: '/team/lists?page_size=2.5',
    status: 400,
    code: 40001,
    says: 'page_size must be an integer',
  },
  {
    name: 'page_num negative',
    path: '/agent/lists?page_num=-1',
    status: 400,
    code: 40001,
    says: 'page_num must be an integer',
  },
  {
    name: 'page_size repeated',
    path: '/team/lists?page_size=1&page_size=2',
    status: 400,
    code: 40001,
    says: 'page_size',
  },
  {
    name: 'message page_size 101',
    path: '/session/message/lists?session_id=s1&page_size=101',
    status: 400,
    code: 40001,
    says: 'page_size must be an integer from 1 to 100',
  },
  {
    name: 'browser pages page_size 101',
    path: '/browser/page/lists?browser_id=b1&page_size=101',
    status: 400,
    code: 40001,
    says: 'page_size must be an integer from 1 to 100',
  },
  // Dates and enums of calls.list.
  {
    name: 'start_date not a date',
    path: '/user/call/lists?start_date=2026-13-01',
    status: 400,
    code: 40001,
    says: 'start_date must be a real calendar date',
  },
  {
    name: 'end_date Feb 30',
    path: '/user/call/lists?end_date=2026-02-30',
    status: 400,
    code: 40001,
    says: 'end_date must be a real calendar date',
  },
  {
    name: 'start_date wrong form',
    path: '/user/call/lists?start_date=01/02/2026',
    status: 400,
    code: 40001,
    says: 'YYYY-MM-DD',
  },
  {
    name: 'start after end',
    path: '/user/call/lists?start_date=2026-10-02&end_date=2026-10-01',
    status: 400,
    code: 40001,
    says: 'end_date must not be before start_date',
  },
  {
    name: 'order_field',
    path: '/user/call/lists?order_field=name',
    status: 400,
    code: 40001,
    says: 'order_field must be one of created_at, total_cost',
  },
  {
    name: 'order',
    path: '/user/call/lists?order=up',
    status: 400,
    code: 40001,
    says: 'order must be one of desc, asc',
  },
  {
    name: 'platform',
    path: '/user/call/lists?platform=web',
    status: 400,
    code: 40001,
    says: 'platform must be one of all, engine, extension, api',
  },
  {
    name: 'team_type',
    path: '/team/lists?team_type=mine',
    status: 400,
    code: 40001,
    says: 'team_type must be one of all, system, user',
  },
  {
    name: 'agent_type',
    path: '/agent/lists?agent_type=robot',
    status: 400,
    code: 40001,
    says: 'agent_type must be one of all, system, user',
  },
  // Path parameters.
  {
    name: 'team_id not a UUID',
    path: '/team/info/not-a-uuid',
    status: 400,
    code: 40001,
    says: 'team_id must be a UUID',
  },
  {
    name: 'agent_id not a UUID',
    path: '/agent/info/123',
    status: 400,
    code: 40001,
    says: 'agent_id must be a UUID',
  },
  {
    name: 'api key id not an integer',
    method: 'DELETE',
    path: '/user/apikey/delete/abc',
    status: 400,
    code: 40001,
    says: 'id must be an integer',
  },
  {
    name: 'api key id zero',
    method: 'DELETE',
    path: '/user/apikey/delete/0',
    status: 400,
    code: 40001,
    says: 'id must be an integer from 1',
  },
  {
    name: 'session id starting with a dot',
    path: '/session/info/.hidden',
    status: 400,
    code: 40001,
    says: 'session_id must be',
  },
  {
    name: 'browser id with a slash',
    path: '/browser/info/a%2Fb',
    status: 400,
    code: 40001,
    says: 'browser_id must be',
  },
  // Required query parameters and message filters.
  {
    name: 'messages without session_id',
    path: '/session/message/lists',
    status: 400,
    code: 40001,
    says: 'session_id is required',
  },
  {
    name: 'between without ids',
    path: '/session/message/between?session_id=s1',
    status: 400,
    code: 40001,
    says: 'from_message_id is required',
  },
  {
    name: 'pages without browser_id',
    path: '/browser/page/lists',
    status: 400,
    code: 40001,
    says: 'browser_id is required',
  },
  {
    name: 'from_timestamp not ISO',
    path: '/session/message/lists?session_id=s1&from_timestamp=yesterday',
    status: 400,
    code: 40001,
    says: 'from_timestamp must be an ISO 8601 date-time',
  },
  {
    name: 'to_timestamp without zone',
    path: '/session/message/lists?session_id=s1&to_timestamp=2026-01-01T00:00:00',
    status: 400,
    code: 40001,
    says: 'to_timestamp must be an ISO 8601 date-time',
  },
  {
    name: 'timestamps reversed',
    path: '/session/message/lists?session_id=s1&from_timestamp=2026-02-01T00:00:00Z&to_timestamp=2026-01-01T00:00:00Z',
    status: 400,
    code: 40001,
    says: 'to_timestamp must not be before from_timestamp',
  },
  // Unknown query parameters.
  {
    name: 'unknown parameter',
    path: '/team/lists?pagesize=5',
    status: 400,
    code: 40003,
    says: 'Unknown query parameter: pagesize',
  },
  {
    // Found by test/fuzz.test.ts: it used to set the values object's prototype and pass.
    name: 'parameter named __proto__',
    path: '/team/lists?__proto__=1&__proto__=2',
    status: 400,
    code: 40003,
    says: 'Unknown query parameter: __proto__',
  },
  {
    name: 'parameter on a route with none',
    path: '/user/call/filter_values?x=1',
    status: 400,
    code: 40003,
    says: 'Unknown query parameter: x',
  },
  // Bodies.
  {
    name: 'apikey name missing',
    method: 'POST',
    path: '/user/apikey/new',
    json: {},
    status: 400,
    code: 40001,
    says: 'name is required',
  },
  {
    name: 'apikey name too long',
    method: 'POST',
    path: '/user/apikey/new',
    json: { name: 'x'.repeat(65) },
    status: 400,
    code: 40001,
    says: 'name must be a string of 1 to 64 characters',
  },
  {
    name: 'apikey unknown body field',
    method: 'POST',
    path: '/user/apikey/new',
    json: { name: 'a', admin: true },
    status: 400,
    code: 40003,
    says: 'Unknown body parameter: admin',
  },
  // session.create, in either shape (PLATFORM.md: the specification's and the current client's).
  ...(
    [
      ['session with neither team_id nor task', {}, 'task is required'],
      ['session title without team_id', { task: 'x', title: 't' }, 'title goes with team_id'],
      [
        'session mixing both shapes',
        { team_id: TEAM, mode: 'marketing' },
        'mode is not sent with team_id',
      ],
      [
        'session mode not a word',
        { task: 'x', mode: 'market ing' },
        'mode must be 1 to 32 letters',
      ],
      [
        'session platform too long',
        { task: 'x', platform: 'p'.repeat(33) },
        'platform must be 1 to 32',
      ],
      ['session intent_id unsafe', { task: 'x', intent_id: '../x' }, 'intent_id must be 1 to 128'],
      ['session extra a list', { task: 'x', extra: [1] }, 'extra must be a JSON object'],
      ['session extra null', { task: 'x', extra: null }, 'extra must be a JSON object'],
      [
        'session extra too deep',
        { task: 'x', extra: { a: { b: { c: { d: { e: { f: { g: { h: { i: 1 } } } } } } } } } },
        'at most 16384 characters and 8 levels',
      ],
      [
        'session extra too long',
        { task: 'x', extra: { pad: 'x'.repeat(16_400) } },
        'at most 16384 characters and 8 levels',
      ],
      [
        'session task too long',
        { task: 'x'.repeat(20_001) },
        'task must be a string of 0 to 20000',
      ],
    ] as const
  ).map(([name, json, says]) => ({
    name,
    method: 'POST',
    path: '/session/create',
    json,
    status: 400,
    code: 40001,
    says,
  })),
  {
    name: 'session team_id not UUID',
    method: 'POST',
    path: '/session/create',
    json: { team_id: 'abc' },
    status: 400,
    code: 40001,
    says: 'team_id must be a UUID',
  },
  {
    name: 'session task not a string',
    method: 'POST',
    path: '/session/create',
    json: { team_id: TEAM, task: 42 },
    status: 400,
    code: 40001,
    says: 'task must be a string of 0 to 20000',
  },
  {
    name: 'session title too long',
    method: 'POST',
    path: '/session/create',
    json: { team_id: TEAM, title: 'x'.repeat(201) },
    status: 400,
    code: 40001,
    says: 'title must be a string of 0 to 200',
  },
  {
    name: 'body is an array',
    method: 'POST',
    path: '/session/create',
    json: [TEAM],
    status: 400,
    code: 40001,
    says: 'body: must be an object',
  },
  // The current client's operations (PLATFORM.md, version 0.3.2).
  {
    name: 'marketing type unknown',
    path: '/session/marketing/data/s1?type=share',
    status: 400,
    code: 40001,
    says: 'type must be one of reply, like, retweet, tweet',
  },
  {
    name: 'product without product',
    method: 'POST',
    path: '/dashboard/product/create',
    json: { attachments: [] },
    status: 400,
    code: 40001,
    says: 'product is required',
  },
  {
    name: 'product attachment not a URL',
    method: 'POST',
    path: '/dashboard/product/create',
    json: { product: 'p', attachments: [{ file_name: 'a', file_url: 'files/a' }] },
    status: 400,
    code: 40001,
    says: 'file_url must be an http(s) URL',
  },
  {
    name: 'product id unsafe',
    path: '/dashboard/product/candidates/..%2Fx/info',
    status: 400,
    code: 40001,
    says: 'product_id must be 1 to 128',
  },
  {
    name: 'query id unsafe',
    path: '/dashboard/product/query/results/a%20b/lists',
    status: 400,
    code: 40001,
    says: 'query_id must be 1 to 128',
  },
  {
    name: 'report update naming nothing',
    method: 'POST',
    path: '/dashboard/report/update/rep_1',
    json: {},
    status: 400,
    code: 40001,
    says: 'name at least one report field to change',
  },
  {
    name: 'report update with a field it cannot change',
    method: 'POST',
    path: '/dashboard/report/update/rep_1',
    json: { report_id: 'rep_2' },
    status: 400,
    code: 40003,
    says: 'Unknown body parameter: report_id',
  },
  {
    name: 'report update with a bad category id',
    method: 'POST',
    path: '/dashboard/report/update/rep_1',
    json: { related_industries: [{ level1: { id: -1 }, level2: [] }] },
    status: 400,
    code: 40001,
    says: 'a category id must be a non-negative integer',
  },
  {
    name: 'categories take no query',
    path: '/dashboard/categories?level=1',
    status: 400,
    code: 40003,
    says: 'Unknown query parameter: level',
  },
  {
    name: 'rename without title',
    method: 'PUT',
    path: '/session/info/s1',
    json: {},
    status: 400,
    code: 40001,
    says: 'title is required',
  },
  {
    name: 'rename with empty title',
    method: 'PUT',
    path: '/session/info/s1',
    json: { title: '' },
    status: 400,
    code: 40001,
    says: 'title must be a string of 1 to 200',
  },
  {
    name: 'rename with another session_id',
    method: 'PUT',
    path: '/session/info/s1',
    json: { title: 't', session_id: 's2' },
    status: 400,
    code: 40001,
    says: 'session_id in the body must match the path',
  },
  {
    name: 'invalid JSON',
    method: 'POST',
    path: '/session/create',
    body: '{"team_id":',
    headers: { 'content-type': 'application/json' },
    status: 400,
    code: 40002,
    says: 'not valid JSON',
  },
  {
    name: 'no content type',
    method: 'POST',
    path: '/session/create',
    body: JSON.stringify({ team_id: TEAM }),
    status: 415,
    code: 41500,
    says: 'application/json',
  },
  {
    name: 'form content type',
    method: 'POST',
    path: '/user/apikey/new',
    body: 'name=x',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    status: 415,
    code: 41500,
    says: 'application/json',
  },
  {
    name: 'body over 64 KiB',
    method: 'POST',
    path: '/session/create',
    json: { team_id: TEAM, task: 'x'.repeat(70_000) },
    status: 413,
    code: 41300,
    says: 'exceeds the limit of 65536 bytes',
  },
];

describe('refused before the upstream', () => {
  it.each(bad.map((b) => [b.name, b] as const))('%s', async (_, b) => {
    const { res, body, id } = await asTenant(tenant, b.path, {
      method: b.method ?? 'GET',
      json: b.json,
      body: b.body,
      headers: b.headers,
    });
    expect(res.status).toBe(b.status);
    expect(body.code).toBe(b.code);
    expect(body.msg).toContain(b.says);
    expect(body.data.request_id).toBe(id);
    expect(res.headers.get('x-request-id')).toBe(id);
    expect(await upstreamSaw(id)).toEqual([]);
  });

  it('names each failing field with its location', async () => {
    const { body } = await asTenant(tenant, '/user/call/lists?page_size=0&order=sideways');
    expect(body.data.errors).toEqual(
      expect.arrayContaining([
        {
          location: 'query',
          field: 'page_size',
          message: 'page_size must be an integer from 1 to 100',
        },
        { location: 'query', field: 'order', message: 'order must be one of desc, asc' },
      ]),
    );
  });

  it('accepts the bounds themselves', async () => {
    for (const path of [
      '/team/lists?page_size=1',
      '/team/lists?page_size=100&page_num=1',
      '/user/call/lists?start_date=2026-02-28&end_date=2026-02-28',
    ]) {
      const { res, body } = await asTenant(tenant, path);
      expect(res.status, path).toBe(200);
      expect(body.code, path).toBe(0);
    }
  });
});
