/**
 * The platform's current client (0.3.2, ../shared/PLATFORM.md "What the platform's
 * current client does") through the `npm start` stack (scripts/stack.ts: wrangler
 * dev and the emulator, on free ports): its requests, replayed as it sends them
 * (the key in x-api-key on every call, session.create without team_id, a multipart
 * upload, the dashboard), each answered by the platform with code 0, and each
 * reaching the emulator with the platform key in its route's header and never the
 * gateway token.
 */

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { opaqueIdFrom } from '../../emulator/dashboard-seed';
import { DEMO_PLATFORM_KEY } from '../../emulator/seed';
import { createTenant, type Stack } from '../../scripts/stack';
import { freshStack } from './fresh-stack';

const STATE = '.wrangler/current-client-test-state';
let stack: Stack;
let token: string;

beforeAll(async () => {
  // The whole flow within one burst window (the default burst is 20 units in 10 s).
  stack = await freshStack(STATE, {
    DEFAULT_LIMITS: JSON.stringify({
      policies: [{ name: 'burst', limit: 1000, window_s: 10 }],
      quota: {},
    }),
  });
  token = (await createTenant(stack, 'client 0.3.2', DEMO_PLATFORM_KEY)).token;
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

interface Recorded {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
}

let serial = 0;
const seen: { what: string; header: 'x-api-key' | 'authorization'; record: Recorded }[] = [];

/**
 * One request as the client sends it: base URL the gateway, the gateway token where the
 * platform key was, in x-api-key. Returns the answer's data; notes what the platform saw.
 */
async function client(
  what: string,
  header: 'x-api-key' | 'authorization',
  method: string,
  path: string,
  body?: unknown,
) {
  const id = `client-032-${++serial}`;
  const headers: Record<string, string> = { 'x-api-key': token, 'x-request-id': id };
  let payload: BodyInit | undefined;
  if (body instanceof FormData) payload = body;
  else if (body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  const res = await fetch(`${stack.gatewayUrl}${path}`, { method, headers, body: payload });
  const answer = (await res.json()) as { code: number; msg: string; data: any };
  expect({ what, status: res.status, code: answer.code }).toEqual({ what, status: 200, code: 0 });
  const records = (await (
    await fetch(`${stack.emulatorUrl}/__emulator/requests?request_id=${id}`)
  ).json()) as Recorded[];
  expect(records, what).toHaveLength(1);
  seen.push({ what, header, record: records[0] as Recorded });
  return answer.data;
}

describe('the platform client 0.3.2 through npm start', () => {
  it('creates a session in its new shape, uploads, and runs the dashboard', async () => {
    const sessionId = (
      await client('session.create', 'x-api-key', 'POST', '/session/create', {
        task: 'Find people who talk about travel planners',
        mode: 'marketing',
        platform: 'x',
        extra: { language: 'en' },
      })
    ).session_id;
    await client('session.info', 'x-api-key', 'GET', `/session/info/${sessionId}`);
    await client(
      'session.marketing_data',
      'x-api-key',
      'GET',
      `/session/marketing/data/${sessionId}?type=reply`,
    );

    const form = new FormData();
    form.append('files', new Blob(['name,price\nwidget,3\n'], { type: 'text/csv' }), 'prices.csv');
    form.append('session_id', sessionId);
    const [uploaded] = await client('session.upload', 'x-api-key', 'POST', '/session/upload', form);
    expect(uploaded.file_name).toBe('prices.csv');

    const product = await client(
      'product.create',
      'x-api-key',
      'POST',
      '/dashboard/product/create',
      {
        product: 'A travel planner',
        attachments: [uploaded],
      },
    );
    expect(product.status).toBe('pending');
    // The client polls until the analysis is done (every 20 s; the emulator is quicker).
    let info = { status: 'pending', analysis_result: { report_id: '' } };
    for (let polls = 0; info.status !== 'completed' && polls < 5; polls++) {
      info = await client(
        'product.info',
        'x-api-key',
        'GET',
        `/dashboard/product/candidates/${product.product_id}/info`,
      );
    }
    expect(info.status).toBe('completed');
    const reportId = info.analysis_result.report_id;
    await client('report.info', 'x-api-key', 'GET', `/dashboard/report/info/${reportId}`);
    const updated = await client(
      'report.update',
      'x-api-key',
      'POST',
      `/dashboard/report/update/${reportId}`,
      { keywords: ['travel', 'planner'] },
    );
    expect(updated.keywords).toEqual(['travel', 'planner']);
    const categories = await client(
      'report.categories',
      'x-api-key',
      'GET',
      '/dashboard/categories',
    );
    expect(categories[0].category).toMatchObject({ id: 1, level: 1 });
    const queryId = opaqueIdFrom('qry', 'demo:query:1');
    const results = await client(
      'product.query_results',
      'x-api-key',
      'GET',
      `/dashboard/product/query/results/${queryId}/lists`,
    );
    expect(results.posts.length).toBeGreaterThan(0);
  });

  it('keeps the operations it shares with the specification', async () => {
    const teams = await client('team.list', 'authorization', 'GET', '/team/lists?team_type=all');
    await client('team.info', 'authorization', 'GET', `/team/info/${teams.data[0].team_id}`);
    await client('agent.list', 'x-api-key', 'GET', '/agent/lists?agent_type=all');
    await client('calls.list', 'x-api-key', 'GET', '/user/call/lists?page_size=5');
  });

  it('puts the platform key in each route header, and the gateway token nowhere', () => {
    // The changed operation and the eight new ones among them.
    expect(new Set(seen.map((s) => s.what))).toEqual(
      new Set([
        'session.create',
        'session.info',
        'session.marketing_data',
        'session.upload',
        'product.create',
        'product.info',
        'product.query_results',
        'report.info',
        'report.update',
        'report.categories',
        'team.list',
        'team.info',
        'agent.list',
        'calls.list',
      ]),
    );
    for (const { what, header, record } of seen) {
      const other = header === 'x-api-key' ? 'authorization' : 'x-api-key';
      expect(record.headers[header], what).toBe(DEMO_PLATFORM_KEY);
      expect(record.headers[other], what).toBeUndefined();
      expect(JSON.stringify(record), what).not.toContain(token);
    }
  });
});
