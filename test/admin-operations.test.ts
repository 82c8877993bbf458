/**
 * The operator API's definitions (src/admin/*.contract.ts) against the app: every route
 * it serves has a definition and every definition a route; and every operation, called
 * for real, answers what its definition says (the schema the document and the clients
 * are made from), nothing more and nothing less.
 */
import { describe, expect, it } from 'vitest';
import { adminRoutes } from '../src/admin';
import { ADMIN_OPERATIONS } from '../src/admin/contract';
import { ADMIN_BASE, type AdminOperation } from '../src/admin/operation';
import {
  ADMIN_TOKEN,
  admin,
  asTenant,
  envelope,
  gatewayWith,
  platformKeys,
  UPSTREAM,
} from './helpers';

const key = (method: string, path: string) => `${method.toUpperCase()} ${path}`;

describe('the operator API’s definitions', () => {
  it('define exactly the routes the app serves, each once', () => {
    const served = adminRoutes()
      .routes.filter((r) => r.method !== 'ALL')
      .map((r) => key(r.method, `${ADMIN_BASE}${r.path}`));
    const defined = [...ADMIN_OPERATIONS.values()].map((op) => key(op.method, op.path));
    expect(served.filter((route) => !defined.includes(route))).toEqual([]);
    expect(defined.filter((route) => !served.includes(route))).toEqual([]);
    expect(new Set(defined).size).toBe(defined.length);
  });

  it('name exactly their path’s parameters, and give every change to admins only', () => {
    for (const [name, op] of ADMIN_OPERATIONS) {
      const inPath = [...op.path.matchAll(/:(\w+)/g)].map((m) => m[1]).sort();
      const shape = (op.params as { shape?: Record<string, unknown> } | undefined)?.shape;
      expect(Object.keys(shape ?? {}).sort(), name).toEqual(inPath);
      if (op.method !== 'get') expect(op.role, name).toBe('admin');
    }
  });
});

/** The definition a request reached, by method and path. */
function operationOf(method: string, path: string): [string, AdminOperation] {
  const pathname = new URL(path, 'https://gateway.test').pathname;
  for (const [name, op] of ADMIN_OPERATIONS) {
    const pattern = new RegExp(`^${op.path.replace(/:\w+/g, '[^/]+')}$`);
    if (op.method === method.toLowerCase() && pattern.test(pathname)) return [name, op];
  }
  throw new Error(`no definition for ${method} ${pathname}`);
}

describe('every operation’s answer', () => {
  it('is what its definition says', async () => {
    const checked = new Set<string>();
    /** Calls an operation; its answer must parse with the definition's schema, unchanged. */
    const call = async (
      method: string,
      path: string,
      body?: unknown,
      send: (path: string, init: RequestInit) => Promise<Response> = admin,
    ) => {
      const [name, op] = operationOf(method, `${ADMIN_BASE}${path}`);
      const res = await send(path, {
        method,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const json = await envelope(res);
      expect(res.status, `${name}: ${JSON.stringify(json)}`).toBe(op.status ?? 200);
      const data = op.envelope === false ? json : json.data;
      const parsed = op.answer().safeParse(data);
      expect(parsed.error?.issues ?? [], name).toEqual([]);
      // Nothing the schema does not name (parsing drops unknown fields).
      expect(parsed.data, name).toEqual(data);
      checked.add(name);
      return data;
    };
    const withPortal = (path: string, init: RequestInit) =>
      gatewayWith({ PORTAL_ORIGIN: 'https://gw.example.com' }, `${ADMIN_BASE}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      });

    await call('GET', '/whoami');
    await call('GET', '/stats');
    await call('GET', '/openapi.json');
    await call('GET', '/operations');
    await call('POST', '/operations/check', { nope: { method: 'GET' } });
    await call('GET', '/overview');
    await call('GET', '/overview/series?hours=168');
    await call('POST', '/keys/check', { platform_key: platformKeys.demo });

    const plan = `contract-${crypto.randomUUID().slice(0, 8)}`;
    const limits = {
      policies: [{ name: 'burst', limit: 50, window_s: 10 }],
      quota: { daily: 900 },
    };
    await call('PUT', `/plans/${plan}`, limits);
    await call('GET', '/plans');
    await call('GET', `/plans/${plan}`);

    const made = await call('POST', '/tenants', {
      name: `contract ${crypto.randomUUID().slice(0, 8)}`,
      platform_key: platformKeys.demo,
      plan,
      token: { name: 'first', scopes: ['full'], limits: { policies: [], quota: { daily: 10 } } },
    });
    const id = made.tenant_id as string;
    await call('GET', '/tenants?page_size=5');
    await call('GET', `/tenants/${id}`);
    await call('PATCH', `/tenants/${id}`, { plan: null, cors_origins: ['https://app.example'] });
    await call('POST', `/tenants/${id}/disable`);
    await call('POST', `/tenants/${id}/enable`);
    await call('POST', `/tenants/${id}/key/check`);

    const issued = await call('POST', `/tenants/${id}/tokens`, {
      name: 'second',
      scopes: ['full'],
    });
    await call('PUT', `/tenants/${id}/tokens/${issued.id}/limits`, {
      policies: [{ name: 'own', limit: 5, window_s: 60, algorithm: 'fixed' }],
      quota: {},
    });
    await call('GET', `/tenants/${id}/usage?token_id=${issued.id}`);
    await call('DELETE', `/tenants/${id}/tokens/${issued.id}/limits`);
    const rotated = await call('POST', `/tenants/${id}/tokens/${issued.id}/rotate`, {
      overlap_s: 60,
    });
    await call('GET', `/tenants/${id}/tokens`);
    await call('DELETE', `/tenants/${id}/tokens/${rotated.id}?with_successors=true`);

    // Rows for the lists: exact mode (each request's guard call carries the ones before
    // it), a daily quota of 2 whose 50 % raises an alert, and three requests (one refused).
    await call('PUT', `/tenants/${id}/alerts`, {
      url: `${UPSTREAM}/__emulator/webhooks/contract-${crypto.randomUUID()}`,
      thresholds: [50],
    });
    await call('PUT', `/tenants/${id}/limits`, {
      policies: [],
      quota: { daily: 2 },
      limiter: 'exact',
    });
    const tenant = { id, token: made.token as string, tokenId: made.token_id as string };
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await asTenant(tenant, '/agent/lists')).res.status);
    expect(statuses).toEqual([200, 200, 429]);
    const history = await call('GET', `/tenants/${id}/analytics?granularity=hour&group_by=route`);
    expect(history.series.length).toBeGreaterThan(0);
    const kept = await call('GET', `/tenants/${id}/requests`);
    expect(kept.requests.length).toBeGreaterThan(0);
    await call('GET', `/tenants/${id}/usage/export?archive=true`);
    const today = new Date().toISOString().slice(0, 10);
    await call('POST', `/tenants/${id}/usage/replay`, { from: today, to: today });
    await call('GET', `/tenants/${id}/alerts`);
    await call('POST', `/tenants/${id}/alerts/test`);
    const raised = await call('GET', `/tenants/${id}/alerts/recent`);
    expect(raised.alerts.length).toBeGreaterThan(0);
    await call('DELETE', `/tenants/${id}/alerts`);
    await call('DELETE', `/tenants/${id}/limits`);
    await call('POST', `/tenants/${id}/cache/purge`);
    await call('POST', `/tenants/${id}/portal-links`, {}, withPortal);
    await call('GET', `/tenants/${id}/partner-access`);
    await call('PUT', `/tenants/${id}/partner-access`, {
      max_keys: 3,
      grant_limits: { policies: [], quota: { daily: 100 } },
    });
    const client = await call('POST', '/oauth/clients', {
      client_name: 'Contract app',
      redirect_uris: ['https://app.example/callback'],
    });
    await call('GET', '/oauth/clients?limit=5');
    await call('DELETE', `/oauth/clients/${client.client_id}`);

    // The fleet as a file: the tenant above, tagged, through a plan and its apply.
    const tag = `contract-${crypto.randomUUID().slice(0, 8)}`;
    await call('GET', '/config/schema');
    const fleet = {
      version: 1,
      tenants: [{ ref: `${tag}-t`, name: 'contract file', tags: [tag], platform_key_ref: 'env:K' }],
    };
    const configBody = { config: fleet, select: tag, platform_keys: { K: platformKeys.demo } };
    const planned = await call('POST', '/config/plan', configBody);
    const ifMatch = (path: string, init: RequestInit) =>
      admin(path, { ...init, headers: { 'if-match': `"${planned.hash}"` } });
    await call('POST', '/config/apply', configBody, ifMatch);
    await call('GET', `/config?tag=${tag}`);
    await call('GET', '/config/applies');
    await call('POST', '/config/backup', { archive_key: 'a passphrase of 16+', select: tag });

    await call('GET', `/audit?tenant_id=${id}`);
    await call('POST', '/maintenance/reencrypt');
    await call('DELETE', `/tenants/${id}`);
    await call('DELETE', `/plans/${plan}`);

    expect([...ADMIN_OPERATIONS.keys()].filter((name) => !checked.has(name))).toEqual([]);
  });
});
