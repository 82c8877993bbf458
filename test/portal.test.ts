/**
 * What the partner portal calls: a token's own view (GET /token), its own
 * rotation (POST /token/rotate, scope token:rotate) and the operator's portal
 * links. A token only ever sees and changes itself, whatever tenant or token
 * id its request names; links end within an hour.
 */
import { exports } from 'cloudflare:workers';
import { afterEach, beforeEach, describe, expect, inject, it, vi } from 'vitest';
import { ERRORS } from '../src/errors';
import { hasScope } from '../src/tenants/scopes';
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
} from './helpers';

const OWN_ORIGIN = 'https://gateway.test';

async function issue(t: TestTenant, spec: Record<string, unknown>): Promise<TestTenant> {
  const res = await admin(`/tenants/${t.id}/tokens`, {
    method: 'POST',
    body: JSON.stringify(spec),
  });
  const body = await envelope(res);
  expect(res.status, JSON.stringify(body)).toBe(201);
  return { id: t.id, token: body.data.token, tokenId: body.data.id };
}

async function portalLink(tenantId: string, body: unknown = {}) {
  const res = await admin(`/tenants/${tenantId}/portal-links`, {
    method: 'POST',
    body: JSON.stringify(body),
  });
  return { res, body: await envelope(res) };
}

const fragmentToken = (url: string) => new URL(url).hash.replace(/^#token=/, '');

// Time moves by injection, never by sleeping: only Date is faked.
beforeEach(() => vi.useFakeTimers({ toFake: ['Date'], now: Date.now() }));
afterEach(() => vi.useRealTimers());

describe('GET /token: the calling token, and nothing else', () => {
  it('names its tenant, its id, scopes and expiry, with the meters as the guard counts them', async () => {
    const t = await createTenant(platformKeys.demo, 'Acme portal');
    const { res, body } = await asTenant(t, '/token');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    // Its RateLimit fields are its own self-service meter's (docs/LIMITS.md).
    expect(res.headers.get('ratelimit-policy')).toBe('"self-service";q=60;w=60');
    expect(res.headers.get('ratelimit')).toMatch(/^"self-service";r=\d+;t=\d+$/);
    expect(body.data.meters).toEqual([
      expect.objectContaining({ name: 'burst', kind: 'rate', used: 0, limit: 100000 }),
    ]);
    expect(body.data.tenant).toEqual({ id: t.id, name: expect.stringMatching(/^Acme portal /) });
    expect(body.data.token).toMatchObject({
      id: t.tokenId,
      name: 'default',
      expires_at: null,
      browser: false,
      last4: t.token.slice(-4),
    });
    // The preset by name: it follows groups added later (docs/OPERATING.md).
    expect(body.data.token.scopes).toEqual(['full']);
    expect(body.data.can_rotate).toBe(false);
    expect(JSON.stringify(body)).not.toContain(t.token);
  });

  it("costs none of the tenant's limits: asking twenty times leaves the burst where it was", async () => {
    const t = await createTenant();
    const first = await asTenant(t, '/token');
    for (let i = 0; i < 19; i++) await asTenant(t, '/token');
    const last = await asTenant(t, '/token');
    expect(last.body.data.meters).toEqual(first.body.data.meters);
    // Its own meter counted all 21 (and perhaps a unit or two on lease to this isolate).
    const left = Number(
      /^"self-service";r=(\d+);/.exec(last.res.headers.get('ratelimit') ?? '')?.[1],
    );
    expect(left).toBeLessThanOrEqual(60 - 21);
    expect(left).toBeGreaterThan(60 - 21 - 8);
  });

  it("answers only with its own tenant when a request names another tenant's id", async () => {
    const a = await createTenant(platformKeys.demo, 'tenant A');
    const b = await createTenant(platformKeys.other, 'tenant B');
    const bWithRotate = await issue(b, { name: 'b-rotate', scopes: ['full', 'token:rotate'] });
    const tries = [
      `/token?tenant_id=${b.id}&token_id=${b.tokenId}`,
      `/usage?tenant_id=${b.id}`,
      `/usage?id=${b.id}`,
    ];
    for (const path of tries) {
      const { res, body } = await asTenant(a, path, {
        headers: { 'x-tenant-id': b.id, 'x-token-id': b.tokenId },
      });
      expect(res.status, path).toBe(200);
      const text = JSON.stringify(body);
      expect(text).toContain(a.id);
      expect(text).not.toContain(b.id);
      expect(text).not.toContain(b.tokenId);
    }
    // Paths that name another tenant are no routes at all for a token.
    for (const path of [`/token/${b.id}`, `/usage/${b.id}`, `/tenants/${b.id}/usage`]) {
      await expectRefusal(await asTenant(a, path), 'NOT_FOUND');
    }
    // A rotation body naming another tenant or token is refused and rotates nothing.
    const aRotate = await issue(a, { name: 'a-rotate', scopes: ['usage:read', 'token:rotate'] });
    for (const json of [{ tenant_id: b.id }, { token_id: bWithRotate.tokenId }]) {
      const refused = await asTenant(aRotate, '/token/rotate', { method: 'POST', json });
      await expectRefusal(refused, 'UNKNOWN_PARAMETER');
    }
    const bTokens = await envelope(await admin(`/tenants/${b.id}/tokens`));
    expect(bTokens.data.tokens).toHaveLength(2);
    expect((await asTenant(bWithRotate, '/token')).res.status).toBe(200);
    const aTokens = await envelope(await admin(`/tenants/${a.id}/tokens`));
    expect(aTokens.data.tokens).toHaveLength(2);
  });

  it('needs a token, and a valid one', async () => {
    await expectRefusal(await gateway('/token'), 'MISSING_TOKEN');
    const wrong = await gateway('/token', { headers: { authorization: 'Bearer apgw_nope' } });
    await expectRefusal(wrong, 'INVALID_TOKEN');
  });
});

describe('POST /token/rotate: a token makes its own successor', () => {
  it('is refused without token:rotate, which no preset grants', async () => {
    expect(hasScope(['full'], 'token:rotate')).toBe(false);
    expect(hasScope(['read-only'], 'token:rotate')).toBe(false);
    const t = await createTenant();
    const refused = await asTenant(t, '/token/rotate', { method: 'POST', json: {} });
    const body = await expectRefusal(refused, 'SCOPE_REQUIRED');
    expect(body.data.scope).toBe('token:rotate');
    expect((await asTenant(t, '/token')).res.status).toBe(200);
  });

  it('answers the successor once; both work during the overlap; the audit names the token', async () => {
    const t = await createTenant();
    const own = await issue(t, {
      name: 'partner',
      scopes: ['read-only', 'token:rotate'],
      expires_in_s: 86_400,
    });
    const view = await asTenant(own, '/token');
    expect(view.body.data.can_rotate).toBe(true);

    const { res, body } = await asTenant(own, '/token/rotate', {
      method: 'POST',
      json: { overlap_s: 600 },
    });
    expect(res.status, JSON.stringify(body)).toBe(201);
    expect(res.headers.get('cache-control')).toBe('private, no-store');
    expect(body.data.token).toMatch(/^apgw_/);
    expect(body.data.id).not.toBe(own.tokenId);
    expect(body.data.name).toBe('partner');
    expect(body.data.scopes).toContain('token:rotate');
    expect(body.data.expires_at).toBe(view.body.data.token.expires_at);
    expect(body.data.old_token.id).toBe(own.tokenId);
    expect(Date.parse(body.data.old_token.expires_at) - Date.now()).toBeGreaterThan(590_000);

    const fresh = { ...own, token: body.data.token as string, tokenId: body.data.id as string };
    expect((await asTenant(fresh, '/token')).body.data.token.id).toBe(fresh.tokenId);
    expect((await asTenant(own, '/agent/lists')).res.status).toBe(200);
    vi.setSystemTime(Date.now() + 601_000);
    await expectRefusal(await asTenant(own, '/agent/lists'), 'TOKEN_EXPIRED');
    expect((await asTenant(fresh, '/agent/lists')).res.status).toBe(200);

    const audit = await envelope(await admin(`/audit?tenant_id=${t.id}&action=token.rotated`));
    expect(audit.data.data[0]).toMatchObject({
      action: 'token.rotated',
      token_id: own.tokenId,
      actor: `token:${own.tokenId}`,
      detail: { new_token_id: fresh.tokenId, by: 'self' },
    });
    expect(JSON.stringify(audit)).not.toContain(fresh.token);
  });

  it('comes from the gateway’s own pages (same origin), never from a foreign one', async () => {
    const t = await createTenant();
    const own = await issue(t, { name: 'p', scopes: ['usage:read', 'token:rotate'] });
    const foreign = await asTenant(own, '/token/rotate', {
      method: 'POST',
      json: {},
      headers: { origin: 'https://evil.example' },
    });
    await expectRefusal(foreign, 'ORIGIN_NOT_ALLOWED');
    const same = await asTenant(own, '/token/rotate', {
      method: 'POST',
      json: { overlap_s: 0 },
      headers: { origin: OWN_ORIGIN },
    });
    expect(same.res.status).toBe(201);
    expect(same.res.headers.get('access-control-allow-origin')).toBeNull();
    await expectRefusal(await asTenant(own, '/token'), 'TOKEN_EXPIRED');
  });

  it.each([
    ['a negative overlap', { overlap_s: -1 }, 'VALIDATION_FAILED', 'overlap_s'],
    ['an overlap over 30 days', { overlap_s: 30 * 86_400 + 1 }, 'VALIDATION_FAILED', 'overlap_s'],
    ['a string overlap', { overlap_s: '60' }, 'VALIDATION_FAILED', 'overlap_s'],
    ['an unknown field', { scopes: ['apikeys:admin'] }, 'UNKNOWN_PARAMETER', undefined],
  ] as const)(
    'refuses %s with its envelope and rotates nothing',
    async (_name, json, kind, field) => {
      const t = await createTenant();
      const own = await issue(t, { name: 'p', scopes: ['usage:read', 'token:rotate'] });
      const refused = await asTenant(own, '/token/rotate', { method: 'POST', json });
      const body = await expectRefusal(refused, kind);
      expect(body.data.request_id).toBe(refused.id);
      if (field) expect(body.data.errors[0].field).toBe(field);
      const tokens = await envelope(await admin(`/tenants/${t.id}/tokens`));
      expect(tokens.data.tokens).toHaveLength(2);
    },
  );

  it('refuses a body that is not JSON', async () => {
    const t = await createTenant();
    const own = await issue(t, { name: 'p', scopes: ['usage:read', 'token:rotate'] });
    const refused = await asTenant(own, '/token/rotate', {
      method: 'POST',
      body: '{not json',
      headers: { 'content-type': 'application/json' },
    });
    await expectRefusal(refused, 'INVALID_JSON');
  });

  it('is never given to a browser token, even one its minter could rotate with', async () => {
    const app = 'https://app.example';
    const t = await createTenant();
    const patched = await admin(`/tenants/${t.id}`, {
      method: 'PATCH',
      body: JSON.stringify({ cors_origins: [app] }),
    });
    expect(patched.status).toBe(200);
    const own = await issue(t, { name: 'p', scopes: ['teams:read', 'token:rotate'] });
    const minted = await asTenant(own, '/auth/browser-token', {
      method: 'POST',
      json: { origin: app, scopes: ['teams:read', 'token:rotate'] },
    });
    expect(minted.res.status).toBe(201);
    expect(minted.body.data.scopes).toEqual(['teams:read']);
    const browser = { ...own, token: minted.body.data.token as string };
    const view = await asTenant(browser, '/token', { headers: { origin: app } });
    expect(view.body.data).toMatchObject({ can_rotate: false, token: { browser: true } });
    const refused = await asTenant(browser, '/token/rotate', {
      method: 'POST',
      json: {},
      headers: { origin: app },
    });
    expect((await expectRefusal(refused, 'SCOPE_REQUIRED')).data.scope).toBe('token:rotate');
  });
});

describe('POST /admin/tenants/:id/portal-links', () => {
  it('gives a link whose token is in the fragment, reads usage only, and ends in 15 minutes', async () => {
    const t = await createTenant();
    const { res, body } = await portalLink(t.id);
    expect(res.status).toBe(201);
    const url = new URL(body.data.url);
    expect(url.origin).toBe(OWN_ORIGIN);
    expect(url.pathname).toBe('/portal/');
    expect(url.search).toBe('');
    expect(url.hash).toMatch(/^#token=apgw_[0-9A-Za-z]{52}$/);
    expect(body.data.scopes).toEqual(['usage:read']);
    const ends = Date.parse(body.data.expires_at) - Date.now();
    expect(ends).toBeGreaterThan(899_000);
    expect(ends).toBeLessThanOrEqual(900_000);

    const link = { ...t, token: fragmentToken(body.data.url), tokenId: body.data.token_id };
    const me = await asTenant(link, '/token');
    expect(me.body.data.tenant.id).toBe(t.id);
    expect(me.body.data.token).toMatchObject({ id: body.data.token_id, name: 'portal-link' });
    expect((await asTenant(link, '/usage')).body.data.tenant_id).toBe(t.id);
    const call = await asTenant(link, '/agent/lists');
    expect((await expectRefusal(call, 'SCOPE_REQUIRED')).data.scope).toBe('agents:read');
    await expectRefusal(
      await asTenant(link, '/token/rotate', { method: 'POST', json: {} }),
      'SCOPE_REQUIRED',
    );

    vi.setSystemTime(Date.now() + 900_001);
    await expectRefusal(await asTenant(link, '/usage'), 'TOKEN_EXPIRED');
    await expectRefusal(await asTenant(link, '/token'), 'TOKEN_EXPIRED');

    const audit = await envelope(
      await admin(`/audit?tenant_id=${t.id}&action=portal_link.created`),
    );
    expect(audit.data.data[0]).toMatchObject({
      token_id: body.data.token_id,
      actor: 'admin-token',
    });
    expect(JSON.stringify(audit)).not.toContain(link.token);
  });

  it('lives at most an hour, and an operator can end it early by revoking its token', async () => {
    const t = await createTenant();
    const { body } = await portalLink(t.id, { expires_in_s: 3600 });
    expect(Date.parse(body.data.expires_at) - Date.now()).toBeLessThanOrEqual(3_600_000);
    const link = { ...t, token: fragmentToken(body.data.url), tokenId: body.data.token_id };
    expect((await asTenant(link, '/usage')).res.status).toBe(200);
    const revoked = await admin(`/tenants/${t.id}/tokens/${body.data.token_id}`, {
      method: 'DELETE',
    });
    expect(revoked.status).toBe(200);
    await expectRefusal(await asTenant(link, '/usage'), 'TOKEN_REVOKED');
  });

  it.each([
    ['over an hour', { expires_in_s: 3601 }, 'VALIDATION_FAILED', 'expires_in_s'],
    ['under a minute', { expires_in_s: 59 }, 'VALIDATION_FAILED', 'expires_in_s'],
    ['not a number', { expires_in_s: '600' }, 'VALIDATION_FAILED', 'expires_in_s'],
    ['with scopes', { scopes: ['full'] }, 'UNKNOWN_PARAMETER', undefined],
  ] as const)('refuses a link %s, and issues no token', async (_name, json, kind, field) => {
    const t = await createTenant();
    const { res, body } = await portalLink(t.id, json);
    expect({ status: res.status, code: body.code }).toEqual({
      status: ERRORS[kind].status,
      code: ERRORS[kind].code,
    });
    if (field) expect(body.data.errors[0].field).toBe(field);
    const tokens = await envelope(await admin(`/tenants/${t.id}/tokens`));
    expect(tokens.data.tokens).toHaveLength(1);
  });

  it('refuses an unknown tenant and a malformed id', async () => {
    const unknown = await portalLink('ten_0000000000000000');
    expect(unknown.body.code).toBe(ERRORS.RESOURCE_NOT_FOUND.code);
    const malformed = await portalLink('acme');
    expect(malformed.body.code).toBe(ERRORS.VALIDATION_FAILED.code);
  });

  it('is made by an Access admin (audited by email), never by a viewer', async () => {
    // The JWTs are signed by a real clock elsewhere: a frozen Date here would find them
    // not yet valid once set-up has taken more than a second.
    vi.useRealTimers();
    const access = inject('localAccess');
    const settings = {
      ACCESS_TEAM_DOMAIN: access.url,
      ACCESS_AUD: access.aud,
      ACCESS_ROLES: access.roles,
      ACCESS_LOCAL_ISSUER: 'allow',
    };
    const jwtFor = async (email: string) =>
      (await fetch(`${access.url}/__access/mint`, {
        method: 'POST',
        body: JSON.stringify({ email }),
      }).then((r) => r.text())) as string;
    const asOperator = (jwt: string, path: string) =>
      gatewayWith(settings, `/admin${path}`, {
        method: 'POST',
        headers: { 'cf-access-jwt-assertion': jwt, 'content-type': 'application/json' },
        body: '{}',
      });
    const t = await createTenant();
    const viewer = await asOperator(
      await jwtFor('viewer@operators.local'),
      `/tenants/${t.id}/portal-links`,
    );
    await expectRefusal(viewer, 'OPERATOR_READ_ONLY');
    const made = await asOperator(
      await jwtFor('admin@operators.local'),
      `/tenants/${t.id}/portal-links`,
    );
    expect(made.status).toBe(201);
    const tokenId = (await envelope(made)).data.token_id;
    const audit = await envelope(
      await admin(`/audit?tenant_id=${t.id}&action=portal_link.created`),
    );
    expect(audit.data.data).toHaveLength(1);
    expect(audit.data.data[0]).toMatchObject({ token_id: tokenId, actor: 'admin@operators.local' });
  });

  it('points at PORTAL_ORIGIN when set: the gateway host, not the one the operator API was called at', async () => {
    const t = await createTenant();
    const post = (origin: string) =>
      gatewayWith({ PORTAL_ORIGIN: origin }, `/admin/tenants/${t.id}/portal-links`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: '{}',
      });
    const made = await post('https://gw.example.com/');
    expect(made.status).toBe(201);
    expect((await envelope(made)).data.url).toMatch(
      /^https:\/\/gw\.example\.com\/portal\/#token=apgw_/,
    );
    expect((await envelope(await post('http://127.0.0.1:8787'))).data.url).toMatch(
      /^http:\/\/127\.0\.0\.1:8787\/portal\/#token=/,
    );
    // Not an origin, or plain http to a public host: the gateway is misconfigured.
    for (const bad of [
      'http://gw.example.com',
      'https://gw.example.com/portal',
      'gw.example.com',
    ]) {
      const refused = await expectRefusal(await post(bad), 'MISCONFIGURED');
      expect(refused.msg).toContain('PORTAL_ORIGIN');
    }
  });

  it('never takes its origin from the request: a forged Host changes nothing, and without PORTAL_ORIGIN it refuses', async () => {
    const t = await createTenant();
    const self = (exports as unknown as { default: Fetcher }).default;
    const forged = await self.fetch(
      new Request(`http://evil.example/admin/tenants/${t.id}/portal-links`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${ADMIN_TOKEN}`,
          'content-type': 'application/json',
          host: 'evil.example',
        },
        body: '{}',
      }),
    );
    expect(forged.status).toBe(201);
    expect((await envelope(forged)).data.url).toMatch(/^https:\/\/gateway\.test\/portal\/#token=/);

    const before = (await envelope(await admin(`/tenants/${t.id}/tokens`))).data.tokens.length;
    const unset = await gatewayWith(
      { PORTAL_ORIGIN: undefined },
      `/admin/tenants/${t.id}/portal-links`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: '{}',
      },
    );
    const refused = await expectRefusal(unset, 'MISCONFIGURED');
    expect(refused.msg).toContain('set it to the gateway');
    expect(refused.msg).toContain('PORTAL_ORIGIN');
    // No token was made for a link that was not.
    const after = (await envelope(await admin(`/tenants/${t.id}/tokens`))).data.tokens.length;
    expect(after).toBe(before);
  });

  it('is for operators only', async () => {
    const t = await createTenant();
    const res = await gateway(`/admin/tenants/${t.id}/portal-links`, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    await expectRefusal(res, 'ADMIN_UNAUTHORIZED');
  });
});
