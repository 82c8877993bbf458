/**
 * What is billable (docs/BILLING.md): the self-service surface (a token reading or
 * rotating itself, its own API document, MCP discovery) is neither billable nor counted
 * against the data quotas, and has its own meter; a security action (rotating one's own
 * token) is never refused for a spent data quota; operators see both in the usage
 * history, labelled, per operation.
 */
import { describe, expect, it } from 'vitest';
import { USAGE_FLUSH_MS } from '../src/limits/usage-buffer';
import {
  admin,
  asTenant,
  createTenant,
  envelope,
  expectRefusal,
  gateway,
  requestId,
  type TestTenant,
  until,
} from './helpers';
import { partnerToken } from './oauth-helpers';

const SCOPES = ['full', 'usage:read', 'token:rotate'];

/** One JSON-RPC message to /mcp, as a 2025-06-18 client sends it. */
async function mcp(t: TestTenant, method: string, params: Record<string, unknown> = {}) {
  const res = await gateway('/mcp', {
    method: 'POST',
    headers: {
      authorization: `Bearer ${t.token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'x-request-id': requestId('mcp'),
      ...(method === 'initialize' ? {} : { 'mcp-protocol-version': '2025-06-18' }),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  return { status: res.status, body: await res.json<any>() };
}

interface Row {
  route: string;
  requests: number;
  units: number;
  billable: number;
  self_service: number;
}

/** The history by operation, once it holds `requests` requests (the flush timer sends the last). */
async function byOperation(t: TestTenant, requests: number): Promise<Record<string, Row>> {
  const started = Date.now();
  while (Date.now() - started < USAGE_FLUSH_MS + 10_000) {
    const { data } = await envelope(
      await admin(`/tenants/${t.id}/analytics?granularity=hour&group_by=route`),
    );
    const rows: Row[] = data.series;
    if (rows.reduce((n, r) => n + r.requests, 0) >= requests) {
      return Object.fromEntries(
        rows.map((r) => [
          r.route,
          {
            route: r.route,
            requests: r.requests,
            units: r.units,
            billable: r.billable,
            self_service: r.self_service,
          },
        ]),
      );
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the usage history did not reach ${requests} requests`);
}

const daily = (meters: { name: string; used: number }[]) => meters.find((m) => m.name === 'daily');

describe('the self-service surface', () => {
  it('is neither billable nor counted against the data quota; a tool call is', async () => {
    const t = await createTenant(undefined, 'self-service', SCOPES);
    await admin(`/tenants/${t.id}/limits`, {
      method: 'PUT',
      body: JSON.stringify({ policies: [], quota: { daily: 100 }, limiter: 'exact' }),
    });
    expect((await asTenant(t, '/token')).res.status).toBe(200);
    expect((await asTenant(t, '/usage')).res.status).toBe(200);
    expect((await asTenant(t, '/usage/requests')).res.status).toBe(200);
    expect((await asTenant(t, '/openapi.json')).res.status).toBe(200);
    expect((await mcp(t, 'initialize', { protocolVersion: '2025-06-18' })).status).toBe(200);
    expect((await mcp(t, 'tools/list')).status).toBe(200);
    expect((await mcp(t, 'ping')).status).toBe(200);
    const rotated = await asTenant(t, '/token/rotate', { method: 'POST', json: {} });
    expect(rotated.res.status).toBe(201);
    // Nothing of the data quota went.
    expect(daily((await asTenant(t, '/usage')).body.data.meters)?.used).toBe(0);
    // A tool call is the operation's own request: billable, on the quota.
    const called = await mcp(t, 'tools/call', { name: 'team.list', arguments: {} });
    expect(called.body.result.isError).toBeFalsy();
    expect((await asTenant(t, '/team/lists')).res.status).toBe(200);

    const rows = await byOperation(t, 11);
    expect(rows['team.list']).toEqual({
      route: 'team.list',
      requests: 2,
      units: 2,
      billable: 2,
      self_service: 0,
    });
    for (const op of ['token.own', 'usage', 'usage.requests', 'openapi', 'mcp', 'token.rotate']) {
      const row = rows[op];
      expect(row, op).toBeDefined();
      expect({ billable: row?.billable, units: row?.units }, op).toEqual({ billable: 0, units: 0 });
      expect(row?.self_service, op).toBe(row?.requests);
    }
    expect(rows.mcp?.requests).toBe(3);
    const console = (await envelope(await admin(`/tenants/${t.id}/usage`))).data;
    expect(daily(console.meters)?.used).toBe(2);
  }, 40_000);

  it('has its own meter: MCP discovery and rotation spend it, never the data limits', async () => {
    const t = await createTenant(undefined, 'self meter', SCOPES);
    await admin(`/tenants/${t.id}/limits`, {
      method: 'PUT',
      body: JSON.stringify({ policies: [], quota: { daily: 1 }, limiter: 'exact' }),
    });
    expect((await asTenant(t, '/team/lists')).res.status).toBe(200);
    const list = await gateway('/mcp', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${t.token}`,
        'content-type': 'application/json',
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    expect(list.status).toBe(200);
    expect(list.headers.get('ratelimit-policy')).toBe('"self-service";q=60;w=60');
  });
});

describe('security actions', () => {
  it('a partner whose daily quota is spent can still rotate its own token', async () => {
    const t = await createTenant(undefined, 'spent quota', SCOPES);
    await admin(`/tenants/${t.id}/limits`, {
      method: 'PUT',
      body: JSON.stringify({ policies: [], quota: { daily: 2 }, limiter: 'exact' }),
    });
    for (let i = 0; i < 2; i++) expect((await asTenant(t, '/team/lists')).res.status).toBe(200);
    await expectRefusal(await asTenant(t, '/team/lists'), 'QUOTA_EXHAUSTED');

    const rotated = await asTenant(t, '/token/rotate', { method: 'POST', json: {} });
    expect(rotated.res.status).toBe(201);
    expect(rotated.res.headers.get('ratelimit-policy')).toBe('"self-service";q=60;w=60');
    const fresh: TestTenant = {
      ...t,
      token: rotated.body.data.token,
      tokenId: rotated.body.data.id,
    };
    // The successor works for self-service, and shares the spent quota for data.
    expect((await asTenant(fresh, '/token')).res.status).toBe(200);
    await expectRefusal(await asTenant(fresh, '/team/lists'), 'QUOTA_EXHAUSTED');
  });

  it('a partner whose daily quota is spent can still make, list and revoke its own keys, and none of it is billable', async () => {
    const t = await createTenant(undefined, 'spent quota, partner keys', SCOPES);
    await admin(`/tenants/${t.id}/limits`, {
      method: 'PUT',
      body: JSON.stringify({ policies: [], quota: { daily: 1 }, limiter: 'exact' }),
    });
    expect((await asTenant(t, '/team/lists')).res.status).toBe(200);
    await expectRefusal(await asTenant(t, '/team/lists'), 'QUOTA_EXHAUSTED');

    const partner: TestTenant = { ...t, token: await partnerToken(t), tokenId: '' };
    const made = await asTenant(partner, '/partner/keys', {
      method: 'POST',
      json: { name: 'backend', scopes: ['full'] },
    });
    expect(made.res.status, JSON.stringify(made.body)).toBe(201);
    expect((await asTenant(partner, '/partner/keys')).res.status).toBe(200);
    const revoked = await asTenant(partner, `/partner/keys/${made.body.data.id}`, {
      method: 'DELETE',
    });
    expect(revoked.res.status).toBe(200);
    expect((await gateway('/.well-known/oauth-authorization-server')).status).toBe(200);

    // The partner's three calls, once the usage history holds them.
    const partnerOps = ['partner.key.create', 'partner.keys', 'partner.key.revoke'];
    let rows: Record<string, Row> = {};
    await until(async () => {
      rows = await byOperation(t, 4);
      return partnerOps.every((op) => rows[op]);
    }, "the partner's calls in the usage history");
    expect(rows['team.list']?.billable).toBe(1);
    for (const op of partnerOps) {
      const row = rows[op];
      expect(row, op).toBeDefined();
      expect({ billable: row?.billable, self_service: row?.self_service }, op).toEqual({
        billable: 0,
        self_service: row?.requests,
      });
    }
  }, 40_000);
});
