/**
 * Discovery and registration (docs/OAUTH.md): the metadata documents (RFC 8414, RFC
 * 9728), the Bearer challenges that point to them, dynamic client registration (RFC
 * 7591) and its bounds (size, redirect URIs, a flood from one network, the fleet's
 * count), the operator's switches (fleet-wide, per tenant) and the operator's own clients.
 */
import { describe, expect, it } from 'vitest';
import { admin, createTenant, envelope, gateway, gatewayWith, platformKeys } from './helpers';
import {
  authorize,
  consentRequestOf,
  consentView,
  decide,
  expectOauthError,
  GATEWAY,
  grantTokens,
  partnerToken,
  pkce,
  REDIRECT,
  register,
  registerClient,
} from './oauth-helpers';

describe('discovery', () => {
  it('publishes the authorization server metadata (RFC 8414)', async () => {
    const res = await gateway('/.well-known/oauth-authorization-server');
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const meta = (await res.json()) as Record<string, unknown>;
    expect(meta).toMatchObject({
      issuer: GATEWAY,
      authorization_endpoint: `${GATEWAY}/oauth/authorize`,
      token_endpoint: `${GATEWAY}/oauth/token`,
      registration_endpoint: `${GATEWAY}/oauth/register`,
      revocation_endpoint: `${GATEWAY}/oauth/revoke`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none'],
      authorization_response_iss_parameter_supported: true,
    });
    expect(meta.scopes_supported).toEqual(expect.arrayContaining(['full', 'teams:read']));
  });

  it('publishes the API and /mcp as protected resources (RFC 9728)', async () => {
    for (const [path, resource] of [
      ['/.well-known/oauth-protected-resource', GATEWAY],
      ['/.well-known/oauth-protected-resource/mcp', `${GATEWAY}/mcp`],
    ]) {
      const res = await gateway(path ?? '');
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({
        resource,
        authorization_servers: [GATEWAY],
        bearer_methods_supported: ['header'],
        scopes_supported: ['full', 'read-only'],
      });
    }
  });

  it('points every 401 of the API and of /mcp to its resource metadata', async () => {
    const missing = await gateway('/team/lists');
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${GATEWAY}/.well-known/oauth-protected-resource"`,
    );
    const invalid = await gateway('/team/lists', { headers: { authorization: 'Bearer apgw_x' } });
    expect(invalid.headers.get('www-authenticate')).toBe(
      `Bearer error="invalid_token", resource_metadata="${GATEWAY}/.well-known/oauth-protected-resource"`,
    );
    const mcp = await gateway('/mcp', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(mcp.status).toBe(401);
    expect(mcp.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${GATEWAY}/.well-known/oauth-protected-resource/mcp"`,
    );
    // The operator API is no OAuth resource: its 401 says nothing of it.
    const operator = await gateway('/admin/tenants', { headers: { authorization: 'Bearer no' } });
    expect(operator.status).toBe(401);
    expect(operator.headers.get('www-authenticate')).toBeNull();
  });
});

describe('dynamic client registration', () => {
  it('registers a public client, readable from any origin', async () => {
    const res = await register(
      {
        client_name: 'My tool',
        redirect_uris: ['http://127.0.0.1:4711/cb', 'com.example.tool:/cb'],
      },
      { origin: 'https://somewhere.example' },
    );
    expect(res.status).toBe(201);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(await res.json()).toMatchObject({
      client_id: expect.stringMatching(/^cli_/),
      client_name: 'My tool',
      redirect_uris: ['http://127.0.0.1:4711/cb', 'com.example.tool:/cb'],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
    });
    const preflight = await gateway('/oauth/register', {
      method: 'OPTIONS',
      headers: { origin: 'https://somewhere.example', 'access-control-request-method': 'POST' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
  });

  it.each([
    ['http on a public host', ['http://app.example/cb']],
    ['javascript:', ['javascript:alert(1)']],
    ['data:', ['data:text/html,hi']],
    ['a fragment', ['https://app.example/cb#x']],
    ['credentials', ['https://user:pw@app.example/cb']],
    ['six of them', Array.from({ length: 6 }, (_, i) => `https://app.example/${i}`)],
    ['none', []],
    ['one over 512 characters', [`https://app.example/${'a'.repeat(500)}`]],
  ])('refuses redirect URIs with %s', async (_, uris) => {
    await expectOauthError(
      await register({ client_name: 'x', redirect_uris: uris }),
      400,
      'invalid_redirect_uri',
    );
  });

  it('refuses metadata too large, not JSON, or asking for a secret', async () => {
    await expectOauthError(
      await register({ client_name: 'x', redirect_uris: [REDIRECT], note: 'a'.repeat(5000) }),
      400,
      'invalid_client_metadata',
    );
    await expectOauthError(await register('{not json'), 400, 'invalid_client_metadata');
    await expectOauthError(
      await register({
        redirect_uris: [REDIRECT],
        token_endpoint_auth_method: 'client_secret_basic',
      }),
      400,
      'invalid_client_metadata',
    );
    await expectOauthError(
      await register({ client_name: 'x\u202e', redirect_uris: [REDIRECT] }),
      400,
      'invalid_client_metadata',
    );
  });

  it('refuses a flood from one network (60 a minute), not from another', async () => {
    const from = { 'cf-connecting-ip': '203.0.113.77' };
    const answers = [];
    for (let i = 0; i < 61; i++) {
      answers.push((await register({ redirect_uris: [REDIRECT] }, from)).status);
    }
    expect(answers.slice(0, 60).every((s) => s === 201)).toBe(true);
    const refused = await register({ redirect_uris: [REDIRECT] }, from);
    const body = await expectOauthError(refused, 429, 'temporarily_unavailable');
    expect(body.error_description).toMatch(/registrations/);
    expect(refused.headers.get('retry-after')).toBe('60');
    expect((await register({ redirect_uris: [REDIRECT] })).status).toBe(201);
  });

  it('refuses a registration once the fleet holds OAUTH_CLIENTS_MAX clients', async () => {
    await registerClient();
    const res = await gatewayWith({ OAUTH_CLIENTS_MAX: '1' }, '/oauth/register', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'cf-connecting-ip': '192.0.2.9' },
      body: JSON.stringify({ redirect_uris: [REDIRECT] }),
    });
    await expectOauthError(res, 429, 'temporarily_unavailable');
  });

  it('is off fleet-wide with OAUTH_REGISTRATION=off: refused, and the metadata names no endpoint', async () => {
    const off = { OAUTH_REGISTRATION: 'off' };
    const res = await gatewayWith(off, '/oauth/register', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [REDIRECT] }),
    });
    await expectOauthError(res, 403, 'access_denied');
    const meta = (await (
      await gatewayWith(off, '/.well-known/oauth-authorization-server')
    ).json()) as Record<string, unknown>;
    expect(meta.registration_endpoint).toBeUndefined();
  });
});

describe("the operator's switches", () => {
  it('a tenant that refuses self-registered apps: the consent says so, and an approval goes back refused', async () => {
    const tenant = await createTenant(platformKeys.demo, 'no dynamic apps');
    const set = await admin(`/tenants/${tenant.id}/partner-access`, {
      method: 'PUT',
      body: JSON.stringify({ dynamic_clients: false }),
    });
    expect(set.status).toBe(200);
    const client = await registerClient();
    const { challenge } = await pkce();
    const request = consentRequestOf(
      await authorize({
        response_type: 'code',
        client_id: client.client_id,
        redirect_uri: REDIRECT,
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }),
    );
    const partner = await partnerToken(tenant);
    const view = await consentView(partner, request);
    expect(view.body.data.refusal).toMatch(/registered themselves/);
    const { body } = await decide(partner, request, true);
    const back = new URL(body.data.redirect_to);
    expect(back.searchParams.get('error')).toBe('unauthorized_client');
    expect(back.searchParams.get('code')).toBeNull();

    // A client the operator registered is approved for this tenant all the same.
    const made = await admin('/oauth/clients', {
      method: 'POST',
      body: JSON.stringify({ client_name: 'Vetted app', redirect_uris: [REDIRECT] }),
    });
    const vetted = await envelope(made);
    expect(made.status).toBe(201);
    expect(vetted.data).toMatchObject({
      kind: 'operator',
      created_by: 'admin-token',
      approved: true,
    });
    const tokens = await grantTokens(tenant, vetted.data);
    expect(tokens.access_token).toMatch(/^apgw_/);
  });

  it("never grants more than the tenant may: read-only here, whatever the app and the partner's token ask", async () => {
    const tenant = await createTenant(platformKeys.demo, 'read-only grants');
    await admin(`/tenants/${tenant.id}/partner-access`, {
      method: 'PUT',
      body: JSON.stringify({ grantable_scopes: ['read-only'] }),
    });
    const access = await envelope(await admin(`/tenants/${tenant.id}/partner-access`));
    expect(access.data).toEqual({
      grantable_scopes: ['read-only'],
      dynamic_clients: true,
      max_keys: 10,
      grant_limits: null,
    });
    const client = await registerClient();
    const tokens = await grantTokens(tenant, client, { scope: 'full apikeys:admin token:rotate' });
    const scopes = tokens.scope.split(' ');
    expect(scopes.length).toBeGreaterThan(0);
    expect(scopes.every((s) => s.endsWith(':read'))).toBe(true);
    expect(tokens.scope).not.toMatch(/apikeys|rotate/);
    const write = await gateway('/session/create', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokens.access_token}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ team_id: crypto.randomUUID(), task: 'x' }),
    });
    expect(write.status).toBe(403);
  });

  it('gives each new grant the own limits the operator set', async () => {
    const tenant = await createTenant(platformKeys.demo, 'grant limits');
    const limits = { policies: [{ name: 'per-minute', limit: 2, window_s: 60 }], quota: {} };
    await admin(`/tenants/${tenant.id}/partner-access`, {
      method: 'PUT',
      body: JSON.stringify({ grant_limits: limits }),
    });
    const tokens = await grantTokens(tenant, await registerClient());
    const call = () =>
      gateway('/team/lists', { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect((await call()).status).toBe(200);
    expect((await call()).status).toBe(200);
    const third = await call();
    expect(third.status).toBe(429);
    expect((await envelope(third)).data.policy).toBe('per-minute-token');
  });

  it('lists and removes clients: a removed client can no longer refresh', async () => {
    const tenant = await createTenant(platformKeys.demo, 'client removed');
    const client = await registerClient({ client_name: 'Soon gone' });
    const tokens = await grantTokens(tenant, client);
    const page = await envelope(await admin('/oauth/clients?limit=200'));
    expect(page.data.clients.map((c: { client_id: string }) => c.client_id)).toContain(
      client.client_id,
    );
    const removed = await admin(`/oauth/clients/${client.client_id}`, { method: 'DELETE' });
    expect(removed.status).toBe(200);
    const res = await gateway('/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: tokens.refresh_token,
        client_id: client.client_id,
      }).toString(),
    });
    await expectOauthError(res, 401, 'invalid_client');
  });
});
