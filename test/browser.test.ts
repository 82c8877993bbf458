/**
 * Browser-side access inside workerd: CORS per tenant, origin-bound browser
 * tokens (minting, use, forgery, expiry, revocation, their rate partition),
 * and the session event stream over WebSocket.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../src/errors';
import { signBrowserToken } from '../src/tenants/browser-token';
import { keyRing } from '../src/tenants/crypto';
import {
  admin,
  createTenant,
  envelope,
  expectRefusal,
  gateway,
  gatewayWith,
  platformKeys,
  requestId,
  type TestTenant,
  testEnv,
  upstreamSaw,
} from './helpers';

const APP = 'https://app.example';
const EVIL = 'https://evil.example';
let tenant: TestTenant;

async function tenantWithOrigins(origins = [APP]): Promise<TestTenant> {
  const t = await createTenant();
  const res = await admin(`/tenants/${t.id}`, {
    method: 'PATCH',
    body: JSON.stringify({ cors_origins: origins }),
  });
  expect(res.status).toBe(200);
  return t;
}

async function mint(t: TestTenant, body: Record<string, unknown>, token = t.token) {
  const res = await gateway('/auth/browser-token', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { res, body: await envelope(res) };
}

function asBrowser(token: string, path: string, origin = APP, init: RequestInit = {}) {
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${token}`);
  if (origin) headers.set('origin', origin);
  return gateway(path, { ...init, headers });
}

beforeAll(async () => {
  tenant = await tenantWithOrigins();
});

describe('minting browser tokens', () => {
  it('exchanges a tenant token for a short-lived, origin-bound token without API key scopes', async () => {
    const { res, body } = await mint(tenant, { origin: APP, ttl_s: 600 });
    expect(res.status).toBe(201);
    expect(body.data.token).toMatch(/^apgb_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(body.data.origin).toBe(APP);
    expect(body.data.scopes).toContain('sessions:write');
    expect(body.data.scopes).not.toContain('apikeys:read');
    expect(Date.parse(body.data.expires_at) - Date.now()).toBeGreaterThan(590_000);
    expect(JSON.stringify(body)).not.toContain(tenant.token);
  });

  it.each([
    ['an origin the tenant does not allow', { origin: EVIL }, 403, ERRORS.ORIGIN_NOT_ALLOWED.code],
    ['a lifetime over one hour', { origin: APP, ttl_s: 3601 }, 400, ERRORS.VALIDATION_FAILED.code],
    ['an origin with a path', { origin: `${APP}/page` }, 400, ERRORS.VALIDATION_FAILED.code],
  ])('refuses %s', async (_, body, status, code) => {
    const { res, body: out } = await mint(tenant, body);
    expect(res.status).toBe(status);
    expect(out.code).toBe(code);
  });

  it('never grants API key scopes to a browser, even from a full token', async () => {
    const refused = await expectRefusal(
      await mint(tenant, { origin: APP, scopes: ['apikeys:admin'] }),
      'VALIDATION_FAILED',
    );
    expect(refused.msg).toContain('cannot have API key scopes');
    const full = await mint(tenant, { origin: APP, scopes: ['full'] });
    expect(full.res.status).toBe(201);
    expect(full.body.data.scopes).toContain('teams:read');
    expect(full.body.data.scopes).not.toContain('apikeys:admin');
    const keys = await asBrowser(full.body.data.token, '/user/apikey/lists');
    expect((await expectRefusal(keys, 'SCOPE_REQUIRED')).data.scope).toBe('apikeys:read');
  });

  it.each(['constructor', '__proto__', 'toString'])(
    'refuses the scope name %s as unknown (400), for a browser token and an operator token',
    async (name) => {
      const { res, body } = await mint(tenant, { origin: APP, scopes: [name] });
      expect(res.status).toBe(400);
      expect(body.code).toBe(ERRORS.VALIDATION_FAILED.code);
      expect(body.msg).toContain(`Unknown scope ${name}`);
      const issued = await admin(`/tenants/${tenant.id}/tokens`, {
        method: 'POST',
        body: JSON.stringify({ name: 'odd', scopes: [name] }),
      });
      expect(issued.status).toBe(400);
      expect((await envelope(issued)).code).toBe(ERRORS.VALIDATION_FAILED.code);
    },
  );

  it('leaves usage:read out of the default scopes; a browser gets it when it asks', async () => {
    const plain = await mint(tenant, { origin: APP });
    expect(plain.res.status).toBe(201);
    expect(plain.body.data.scopes).not.toContain('usage:read');
    const usage = await asBrowser(plain.body.data.token, '/usage');
    expect(usage.status).toBe(403);
    expect((await envelope(usage)).code).toBe(ERRORS.SCOPE_REQUIRED.code);
    const asked = await mint(tenant, { origin: APP, scopes: ['usage:read', 'teams:read'] });
    expect(asked.body.data.scopes).toEqual(['teams:read', 'usage:read']);
    expect((await asBrowser(asked.body.data.token, '/usage')).status).toBe(200);
  });

  it('lives 900 s when no lifetime is asked for', async () => {
    const { body } = await mint(tenant, { origin: APP });
    expect(Math.abs(Date.parse(body.data.expires_at) - (Date.now() + 900_000))).toBeLessThan(5_000);
  });

  it('refuses scopes beyond the minting token', async () => {
    const t = await tenantWithOrigins();
    const narrow = await envelope(
      await admin(`/tenants/${t.id}/tokens`, {
        method: 'POST',
        body: JSON.stringify({ name: 'ro', scopes: ['read-only'] }),
      }),
    );
    const refused = await expectRefusal(
      await mint(t, { origin: APP, scopes: ['sessions:write'] }, narrow.data.token),
      'SCOPE_REQUIRED',
    );
    expect(refused.msg).toContain('sessions:write');
  });

  it('a browser token cannot mint tokens', async () => {
    const { body: minted } = await mint(tenant, { origin: APP });
    const res = await asBrowser(minted.data.token, '/auth/browser-token', APP, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ origin: APP }),
    });
    expect(res.status).toBe(403);
    expect((await envelope(res)).code).toBe(ERRORS.BROWSER_TOKEN_CANNOT_MINT.code);
  });
});

describe('using browser tokens', () => {
  it('works from its origin, with a CORS grant for that origin only', async () => {
    const { body: minted } = await mint(tenant, { origin: APP });
    const res = await asBrowser(minted.data.token, '/team/lists');
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(APP);
    expect(res.headers.get('access-control-expose-headers')).toContain('RateLimit');
    expect(res.headers.get('vary')).toContain('Origin');
  });

  it.each([
    ['another origin', EVIL],
    ['no origin', ''],
  ])('is refused from %s with 403 and no CORS grant', async (_, origin) => {
    const { body: minted } = await mint(tenant, { origin: APP });
    const id = requestId();
    const res = await asBrowser(minted.data.token, '/agent/lists', origin, {
      headers: { 'x-request-id': id },
    });
    expect(res.status).toBe(403);
    expect((await envelope(res)).code).toBe(ERRORS.ORIGIN_NOT_ALLOWED.code);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(await upstreamSaw(id)).toEqual([]);
  });

  it('is refused from another origin the tenant also allows: it is bound to one', async () => {
    const t = await tenantWithOrigins([APP, 'https://admin.example']);
    const { body: minted } = await mint(t, { origin: APP });
    const res = await asBrowser(minted.data.token, '/agent/lists', 'https://admin.example');
    expect((await expectRefusal(res, 'ORIGIN_NOT_ALLOWED')).msg).toContain(
      'bound to another origin',
    );
  });

  it('a forged token is refused', async () => {
    const { body: minted } = await mint(tenant, { origin: APP });
    const [payload, sig] = (minted.data.token as string).slice(5).split('.');
    const claims = JSON.parse(atob(payload!.replace(/-/g, '+').replace(/_/g, '/')));
    const widened = btoa(JSON.stringify({ ...claims, org: EVIL }))
      .replace(/\+/g, '-')
      .replace(/\//g, '_')
      .replace(/=+$/, '');
    for (const forged of [
      `apgb_${widened}.${sig}`,
      `${minted.data.token.slice(0, -3)}abc`,
      'apgb_garbage',
    ]) {
      const res = await asBrowser(forged, '/agent/lists', EVIL);
      expect(res.status).toBe(401);
      expect((await envelope(res)).code).toBe(ERRORS.INVALID_TOKEN.code);
    }
  });

  it('a token whose claims are not an object is refused, not a crash', async () => {
    const res = await asBrowser('apgb_bnVsbA.eA', '/agent/lists');
    expect(res.status).toBe(401);
    expect((await envelope(res)).code).toBe(ERRORS.INVALID_TOKEN.code);
  });

  it('stops with its minting token even where the TenantGuard is off', async () => {
    const t = await tenantWithOrigins();
    const { body: minted } = await mint(t, { origin: APP });
    await admin(`/tenants/${t.id}/tokens/${t.tokenId}`, { method: 'DELETE' });
    const res = await gatewayWith({ LIMITS_ENABLED: 'false' }, '/agent/lists', {
      headers: { authorization: `Bearer ${minted.data.token}`, origin: APP },
    });
    expect(res.status).toBe(401);
    expect((await envelope(res)).code).toBe(ERRORS.TOKEN_REVOKED.code);
  });

  it('an expired token is refused', async () => {
    const ring = await keyRing(testEnv.KEY_ENCRYPTION_KEY!);
    const expired = await signBrowserToken(ring, {
      ten: tenant.id,
      tok: tenant.tokenId,
      org: APP,
      scp: ['teams:read'],
      exp: Math.floor(Date.now() / 1000) - 1,
      prt: 'bexpired',
    });
    const res = await asBrowser(expired, '/team/lists');
    expect(res.status).toBe(401);
    expect((await envelope(res)).code).toBe(ERRORS.TOKEN_EXPIRED.code);
    // The page can read the refusal: the origin is allowed.
    expect(res.headers.get('access-control-allow-origin')).toBe(APP);
  });

  it('keeps to its scopes', async () => {
    const { body: minted } = await mint(tenant, { origin: APP, scopes: ['teams:read'] });
    expect((await asBrowser(minted.data.token, '/team/lists')).status).toBe(200);
    const res = await asBrowser(minted.data.token, '/agent/lists');
    expect((await expectRefusal(res, 'SCOPE_REQUIRED')).data.scope).toBe('agents:read');
  });

  it('stops when its minting token is revoked', async () => {
    const t = await tenantWithOrigins();
    const { body: minted } = await mint(t, { origin: APP });
    expect((await asBrowser(minted.data.token, '/agent/lists')).status).toBe(200);
    await admin(`/tenants/${t.id}/tokens/${t.tokenId}`, { method: 'DELETE' });
    await expectRefusal(await asBrowser(minted.data.token, '/agent/lists'), 'TOKEN_REVOKED');
  });

  it('counts in its own partition inside the tenant limits', async () => {
    const t = await tenantWithOrigins();
    await admin(`/tenants/${t.id}/limits`, {
      method: 'PUT',
      body: JSON.stringify({ policies: [{ name: 'burst', limit: 10, window_s: 3600 }] }),
    });
    const { body: minted } = await mint(t, { origin: APP });
    // BROWSER_PARTITION_SHARE 0.5 of 10: five requests for this browser token.
    const first = await asBrowser(minted.data.token, '/agent/lists');
    expect(first.headers.get('ratelimit-policy')).toBe(
      '"burst";q=10;w=3600, "burst-browser";q=5;w=3600',
    );
    for (let i = 0; i < 4; i++)
      expect((await asBrowser(minted.data.token, '/agent/lists')).status).toBe(200);
    const sixth = await asBrowser(minted.data.token, '/agent/lists');
    expect((await expectRefusal(sixth, 'RATE_LIMITED')).data.policy).toBe('burst-browser');
    // Another browser token of the same tenant has its own share; the tenant its own.
    const { body: other } = await mint(t, { origin: APP });
    expect((await asBrowser(other.data.token, '/agent/lists')).status).toBe(200);
    expect((await gateway('/agent/lists', { headers: { authorization: t.token } })).status).toBe(
      200,
    );
  });
});

describe('preflight', () => {
  const preflight = (origin: string) =>
    gateway('/session/create', {
      method: 'OPTIONS',
      headers: {
        origin,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });

  it('is answered at the edge for an allowed origin', async () => {
    const res = await preflight(APP);
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(APP);
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
    expect(res.headers.get('access-control-allow-headers')).toContain('authorization');
    expect(res.headers.get('access-control-max-age')).toBe('600');
  });

  it('does not mistake an origin for another with a port', async () => {
    await tenantWithOrigins(['http://ports.example:8080']);
    expect((await preflight('http://ports.example:8080')).status).toBe(204);
    await expectRefusal(await preflight('http://ports.example'), 'ORIGIN_NOT_ALLOWED');
  });

  it('never answers for the operator API', async () => {
    const res = await gateway('/admin/tenants', {
      method: 'OPTIONS',
      headers: { origin: APP, 'access-control-request-method': 'POST' },
    });
    // No preflight grant: the operator API answers it as any call without its token.
    await expectRefusal(res, 'ADMIN_UNAUTHORIZED');
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const get = await gateway('/admin/tenants', {
      headers: { origin: APP, authorization: `Bearer ${testEnv.ADMIN_TOKEN}` },
    });
    expect(get.status).toBe(200);
    expect((await envelope(get)).code).toBe(0);
    expect(get.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('gets a 403 envelope and no grant for any other origin', async () => {
    const res = await preflight(EVIL);
    expect(res.status).toBe(403);
    expect((await envelope(res)).code).toBe(ERRORS.ORIGIN_NOT_ALLOWED.code);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('session event stream', () => {
  async function sessionId(t: TestTenant) {
    const teams = await envelope(
      await gateway('/team/lists', { headers: { authorization: t.token } }),
    );
    const created = await envelope(
      await gateway('/session/create', {
        method: 'POST',
        headers: { authorization: t.token, 'content-type': 'application/json' },
        body: JSON.stringify({ team_id: teams.data.data[0].team_id, task: 'stream me' }),
      }),
    );
    return created.data.session_id as string;
  }

  it('proxies the stream for a browser token offered as a subprotocol, with the platform key upstream', async () => {
    const { body: minted } = await mint(tenant, { origin: APP });
    const id = requestId('ws');
    const res = await gateway(`/session/ws/${await sessionId(tenant)}`, {
      headers: {
        upgrade: 'websocket',
        origin: APP,
        'sec-websocket-protocol': `apgw, ${minted.data.token}`,
        'x-request-id': id,
      },
    });
    expect(res.status).toBe(101);
    expect(res.headers.get('sec-websocket-protocol')).toBe('apgw');
    const ws = res.webSocket!;
    const frames: { type: string }[] = [];
    const closed = new Promise<number>((resolve) =>
      ws.addEventListener('close', (e) => resolve(e.code)),
    );
    // A handler returns nothing: workerd warns about a returned value (push's length).
    ws.addEventListener('message', (e) => {
      frames.push(JSON.parse(e.data as string));
    });
    ws.accept();
    expect(await closed).toBe(1000);
    expect(frames[0]!.type).toBe('session.snapshot');
    expect(frames.filter((f) => f.type === 'message').length).toBeGreaterThan(1);
    expect(frames.at(-1)).toMatchObject({ type: 'session.status', status: 'completed' });
    const [seen] = await upstreamSaw(id);
    expect(seen!.query.api_key).toBe(platformKeys.demo);
    expect(JSON.stringify(frames)).not.toContain(platformKeys.demo);
  });

  it('closes an open stream when its token expires (4401)', async () => {
    const ring = await keyRing(testEnv.KEY_ENCRYPTION_KEY!);
    // Expires in 0.3 to 1.3 s: before the emulator's stream would complete (about 1.5 s).
    const exp = Math.ceil((Date.now() + 300) / 1000);
    const shortLived = await signBrowserToken(ring, {
      ten: tenant.id,
      tok: tenant.tokenId,
      org: APP,
      scp: ['sessions:read', 'teams:read', 'sessions:write'],
      exp,
      prt: 'bshort',
    });
    const res = await gateway(`/session/ws/${await sessionId(tenant)}`, {
      headers: {
        upgrade: 'websocket',
        origin: APP,
        'sec-websocket-protocol': `apgw, ${shortLived}`,
      },
    });
    expect(res.status).toBe(101);
    const ws = res.webSocket!;
    const types: string[] = [];
    const closed = new Promise<number>((resolve) =>
      ws.addEventListener('close', (e) => resolve(e.code)),
    );
    ws.addEventListener('message', (e) => {
      types.push(JSON.parse(e.data as string).type);
    });
    ws.accept();
    expect(await closed).toBe(4401);
    expect(types).not.toContain('session.status');
  });

  it('refuses a plain GET with 426 and a wrong origin with 403', async () => {
    const { body: minted } = await mint(tenant, { origin: APP });
    const t = await tenantWithOrigins();
    await admin(`/tenants/${t.id}/limits`, {
      method: 'PUT',
      body: JSON.stringify({ policies: [{ name: 'burst', limit: 100, window_s: 3600 }] }),
    });
    const plain = await gateway('/session/ws/abc', { headers: { authorization: t.token } });
    await expectRefusal(plain, 'UPGRADE_REQUIRED');
    // Refused before the limiter: nothing was counted.
    const usage = await envelope(await admin(`/tenants/${t.id}/usage`));
    expect(usage.data.meters[0].used).toBe(0);
    // Opening a stream counts 1, whatever happens on it.
    const opened = await gateway('/session/ws/no-such-session', {
      headers: { upgrade: 'websocket', authorization: t.token },
    });
    expect(opened.status).toBe(101);
    opened.webSocket!.accept();
    expect((await envelope(await admin(`/tenants/${t.id}/usage`))).data.meters[0].used).toBe(1);
    const wrong = await gateway('/session/ws/abc', {
      headers: {
        upgrade: 'websocket',
        origin: EVIL,
        'sec-websocket-protocol': `apgw, ${minted.data.token}`,
      },
    });
    await expectRefusal(wrong, 'ORIGIN_NOT_ALLOWED');
  });

  it('does not take a long-lived tenant token from the URL', async () => {
    const res = await gateway(`/session/ws/abc?access_token=${tenant.token}`, {
      headers: { upgrade: 'websocket' },
    });
    expect(res.status).toBe(401);
    expect((await envelope(res)).code).toBe(ERRORS.MISSING_TOKEN.code);
  });

  it("takes no gateway token in the platform client's ?api_key= unless WS_QUERY_TOKENS=all", async () => {
    for (const name of ['api_key', 'authorization']) {
      const res = await gateway(`/session/ws/abc?${name}=${tenant.token}`, {
        headers: { upgrade: 'websocket' },
      });
      expect(res.status).toBe(401);
      expect((await envelope(res)).code).toBe(ERRORS.MISSING_TOKEN.code);
    }
  });

  it("takes the platform client's ?api_key= and ?authorization= with WS_QUERY_TOKENS=all", async () => {
    for (const query of [`api_key=${tenant.token}`, `authorization=Bearer%20${tenant.token}`]) {
      const res = await gatewayWith(
        { WS_QUERY_TOKENS: 'all' },
        `/session/ws/no-such-session?${query}`,
        { headers: { upgrade: 'websocket' } },
      );
      expect(res.status).toBe(101);
      const ws = res.webSocket!;
      const closed = new Promise<number>((resolve) =>
        ws.addEventListener('close', (e) => resolve(e.code)),
      );
      ws.accept();
      expect(await closed).toBe(4404);
    }
    // Never a long-lived token in our own parameter, whatever the setting.
    const res = await gatewayWith(
      { WS_QUERY_TOKENS: 'all' },
      `/session/ws/abc?access_token=${tenant.token}`,
      { headers: { upgrade: 'websocket' } },
    );
    expect(res.status).toBe(401);
  });

  it('takes ?access_token= too, and reports an unknown session by closing', async () => {
    const { body: minted } = await mint(tenant, { origin: APP });
    const res = await gateway(`/session/ws/no-such-session?access_token=${minted.data.token}`, {
      headers: { upgrade: 'websocket', origin: APP },
    });
    expect(res.status).toBe(101);
    const ws = res.webSocket!;
    const closed = new Promise<number>((resolve) =>
      ws.addEventListener('close', (e) => resolve(e.code)),
    );
    ws.accept();
    expect(await closed).toBe(4404);
  });
});
