/**
 * OAuth 2.1 end to end in workerd (docs/OAUTH.md): a public client registers, the
 * partner approves it (as the portal does), the client exchanges its code with PKCE and
 * calls the API and /mcp with an ordinary gateway token of the grant, bound to the
 * resource it was granted for; refreshes rotate, a reused refresh token ends the grant,
 * and a revoked grant is refused at once, by the tenant's guard, whatever KV still says.
 */
import { describe, expect, it } from 'vitest';
import { hashToken } from '../src/tenants/token';
import {
  admin,
  createTenant,
  envelope,
  expectRefusal,
  gateway,
  platformKeys,
  testEnv,
  until,
} from './helpers';
import {
  APP_ORIGIN,
  codeFor,
  expectOauthError,
  GATEWAY,
  grantTokens,
  registerClient,
  type Tokens,
  tokenRequest,
} from './oauth-helpers';

const bearer = (token: string, init: RequestInit = {}) => ({
  ...init,
  headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string>) },
});

function refresh(client: { client_id: string }, refreshToken: string, extra = {}) {
  return tokenRequest({
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: client.client_id,
    ...extra,
  });
}

const mcpList = (token: string) =>
  gateway('/mcp', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });

describe('a public client with PKCE', () => {
  it('gets a token through consent and calls the API with it, as a grant of the tenant', async () => {
    const tenant = await createTenant(platformKeys.demo, 'oauth flow');
    const client = await registerClient({ client_name: 'Travel planner' });
    const tokens = await grantTokens(tenant, client);
    expect(tokens.token_type).toBe('Bearer');
    expect(tokens.expires_in).toBeGreaterThan(3500);
    expect(tokens.expires_in).toBeLessThanOrEqual(3600);
    expect(tokens.access_token).toMatch(/^apgw_/);
    expect(tokens.refresh_token).toMatch(/^apgr_/);
    // `full`, as asked by default: never the platform's API keys, rotation or partner:manage.
    expect(tokens.scope.split(' ')).toContain('teams:read');
    expect(tokens.scope).not.toMatch(/apikeys|token:rotate|partner:manage/);

    const res = await gateway('/team/lists', bearer(tokens.access_token));
    expect(res.status).toBe(200);
    expect((await envelope(res)).code).toBe(0);

    // In the operator's token list: a token named for the app, marked as its grant.
    const listed = await envelope(await admin(`/tenants/${tenant.id}/tokens`));
    const grant = listed.data.tokens.find(
      (t: { grant?: { client_id: string } }) => t.grant?.client_id === client.client_id,
    );
    expect(grant).toMatchObject({
      name: 'OAuth: Travel planner',
      grant: { client_name: 'Travel planner', origin: APP_ORIGIN },
    });
    // Asked for no resource (RFC 8707): the token serves the API and /mcp alike.
    expect(grant.resource).toBeUndefined();
    expect((await mcpList(tokens.access_token)).status).toBe(200);
    expect(grant.grant.granted_by).toMatch(/^token:tok_/);
    expect(new Date(grant.expires_at).getTime()).toBeLessThanOrEqual(Date.now() + 3600_000);

    // The audit log says who granted what to which app.
    await until(async () => {
      const audit = await envelope(
        await admin(`/audit?tenant_id=${tenant.id}&action=oauth.granted`),
      );
      return audit.data.data.length === 1;
    }, 'the grant audited');
    const audit = await envelope(await admin(`/audit?tenant_id=${tenant.id}&action=oauth.granted`));
    expect(audit.data.data[0]).toMatchObject({
      actor: grant.grant.granted_by,
      token_id: grant.id,
      detail: { client_name: 'Travel planner', redirect_host: 'app.example' },
    });
  });

  it('narrows the scopes to those the partner left checked', async () => {
    const tenant = await createTenant(platformKeys.demo, 'oauth narrowed');
    const client = await registerClient();
    const tokens = await grantTokens(tenant, client, { chosen: ['teams:read'] });
    expect(tokens.scope).toBe('teams:read');
    expect((await gateway('/team/lists', bearer(tokens.access_token))).status).toBe(200);
    // A call that needs more: 403 naming the scope, and a challenge an OAuth client reads.
    const refused = await gateway('/agent/lists', bearer(tokens.access_token));
    const body = await expectRefusal(refused, 'SCOPE_REQUIRED');
    expect(refused.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_scope", resource_metadata="${GATEWAY}/.well-known/oauth-protected-resource", scope="${body.data.scope}"`,
    );
  });

  it('binds the token to its resource: an API token is refused at /mcp, an /mcp token at the API', async () => {
    const tenant = await createTenant(platformKeys.demo, 'oauth resources');
    const client = await registerClient();
    const api = await grantTokens(tenant, client, { resource: GATEWAY });
    const atMcp = await mcpList(api.access_token);
    expect(atMcp.status).toBe(401);
    expect(atMcp.headers.get('www-authenticate')).toBe(
      `Bearer error="invalid_token", resource_metadata="${GATEWAY}/.well-known/oauth-protected-resource/mcp"`,
    );

    const mcp = await grantTokens(tenant, client, { resource: `${GATEWAY}/mcp` });
    const listed = await mcpList(mcp.access_token);
    expect(listed.status).toBe(200);
    const tools = ((await listed.json()) as { result: { tools: { name: string }[] } }).result.tools;
    expect(tools.length).toBeGreaterThan(0);
    // Its tool calls are /mcp's own requests: they work.
    const called = await gateway('/mcp', {
      method: 'POST',
      headers: { authorization: `Bearer ${mcp.access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'team.list', arguments: { page_size: 1 } },
      }),
    });
    const result = (await called.json()) as { result: { isError?: boolean } };
    expect(result.result.isError).toBeFalsy();
    const atApi = await gateway('/team/lists', bearer(mcp.access_token));
    const refusal = await expectRefusal(atApi, 'INVALID_TOKEN');
    expect(refusal.msg).toContain('/mcp');
    expect(atApi.headers.get('www-authenticate')).toBe(
      `Bearer error="invalid_token", resource_metadata="${GATEWAY}/.well-known/oauth-protected-resource"`,
    );
  });

  it('binds a token of a grant for every resource to the one its token request names', async () => {
    const tenant = await createTenant(platformKeys.demo, 'oauth narrowed resource');
    const client = await registerClient();
    const { code, verifier, redirect } = await codeFor(tenant, client);
    const res = await tokenRequest({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: redirect,
      client_id: client.client_id,
      resource: `${GATEWAY}/mcp`,
    });
    const tokens = (await res.json()) as Tokens;
    expect(res.status).toBe(200);
    expect((await mcpList(tokens.access_token)).status).toBe(200);
    await expectRefusal(await gateway('/team/lists', bearer(tokens.access_token)), 'INVALID_TOKEN');
    // Its refresh may name the other: the new token serves that one only.
    const api = (await (
      await refresh(client, tokens.refresh_token, { resource: GATEWAY })
    ).json()) as Tokens;
    expect((await gateway('/team/lists', bearer(api.access_token))).status).toBe(200);
    expect((await mcpList(api.access_token)).status).toBe(401);
  });

  it("lets a browser app call from its redirect URI's origin, and no other", async () => {
    const tenant = await createTenant(platformKeys.demo, 'oauth browser');
    const client = await registerClient();
    const tokens = await grantTokens(tenant, client);
    const preflight = await gateway('/team/lists', {
      method: 'OPTIONS',
      headers: {
        origin: APP_ORIGIN,
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization',
      },
    });
    expect(preflight.status).toBe(204);
    const res = await gateway(
      '/team/lists',
      bearer(tokens.access_token, { headers: { origin: APP_ORIGIN } }),
    );
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    const elsewhere = await gateway(
      '/team/lists',
      bearer(tokens.access_token, { headers: { origin: 'https://evil.example' } }),
    );
    await expectRefusal(elsewhere, 'ORIGIN_NOT_ALLOWED');
  });

  it("an app's own scheme gives its token no browser origin: Origin: null is refused", async () => {
    const tenant = await createTenant(platformKeys.demo, 'oauth native');
    const client = await registerClient({ redirect_uris: ['com.example.tool:/cb'] });
    const tokens = await grantTokens(tenant, client);
    expect((await gateway('/team/lists', bearer(tokens.access_token))).status).toBe(200);
    // A sandboxed page or a data: URL sends "null", which is what such a URI's URL origin reads.
    const sandboxed = await gateway(
      '/team/lists',
      bearer(tokens.access_token, { headers: { origin: 'null' } }),
    );
    await expectRefusal(sandboxed, 'ORIGIN_NOT_ALLOWED');
  });
});

describe('refresh tokens rotate; a reused one ends the grant', () => {
  it('gives a new access token and refresh token, and the grant keeps its token id', async () => {
    const tenant = await createTenant(platformKeys.demo, 'oauth refresh');
    const client = await registerClient();
    const first = await grantTokens(tenant, client);
    const res = await refresh(client, first.refresh_token);
    const second = (await res.json()) as Tokens;
    expect(res.status, JSON.stringify(second)).toBe(200);
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect((await gateway('/team/lists', bearer(second.access_token))).status).toBe(200);
    // One grant, one token id: its usage and limits stay the grant's.
    const ids = await Promise.all(
      [first.access_token, second.access_token].map(async (t) => {
        const own = await envelope(await gateway('/token', bearer(t)));
        return own.data.token.id;
      }),
    );
    expect(ids[0]).toBe(ids[1]);
    // A refresh may narrow, never widen.
    const narrowed = (await (
      await refresh(client, second.refresh_token, { scope: 'teams:read' })
    ).json()) as Tokens;
    expect(narrowed.scope).toBe('teams:read');
  });

  it('revokes the whole grant when a spent refresh token comes again', async () => {
    const tenant = await createTenant(platformKeys.demo, 'oauth reuse');
    const client = await registerClient();
    const first = await grantTokens(tenant, client);
    const second = (await (await refresh(client, first.refresh_token)).json()) as Tokens;
    expect((await gateway('/team/lists', bearer(second.access_token))).status).toBe(200);

    // An attacker (or a confused client) replays the first refresh token.
    await expectOauthError(await refresh(client, first.refresh_token), 400, 'invalid_grant');
    // Every token of the grant is refused now, and its newest refresh token too.
    await expectRefusal(await gateway('/team/lists', bearer(second.access_token)), 'TOKEN_REVOKED');
    await expectRefusal(await gateway('/team/lists', bearer(first.access_token)), 'TOKEN_REVOKED');
    const again = await expectOauthError(
      await refresh(client, second.refresh_token),
      400,
      'invalid_grant',
    );
    expect(again.error_description).toMatch(/revoked/);
  });

  it('refuses a refresh token presented by another client, and changes nothing', async () => {
    const tenant = await createTenant(platformKeys.demo, 'oauth other client');
    const client = await registerClient();
    const other = await registerClient({ client_name: 'Other app' });
    const tokens = await grantTokens(tenant, client);
    await expectOauthError(await refresh(other, tokens.refresh_token), 400, 'invalid_grant');
    expect((await refresh(client, tokens.refresh_token)).status).toBe(200);
  });
});

describe('revocation', () => {
  it('by the partner in the portal: refused by the guard at once, even where KV still has the token', async () => {
    const tenant = await createTenant(platformKeys.demo, 'oauth revoked');
    const client = await registerClient();
    const tokens = await grantTokens(tenant, client);
    expect((await gateway('/team/lists', bearer(tokens.access_token))).status).toBe(200);
    const apps = await envelope(await gateway('/partner/apps', bearer(tokens.partner)));
    expect(apps.data.apps).toHaveLength(1);
    const app = apps.data.apps[0];
    expect(app).toMatchObject({
      client_name: 'Test app',
      redirect_host: 'app.example',
      revoked_at: null,
    });

    // What another location sees right after: KV's old record. Only the guard knows.
    const key = `token:${await hashToken(tokens.access_token)}`;
    const before = await testEnv.TENANTS.get(key);
    const revoked = await gateway(
      `/partner/apps/${app.id}`,
      bearer(tokens.partner, { method: 'DELETE' }),
    );
    expect(revoked.status).toBe(200);
    if (before) await testEnv.TENANTS.put(key, before);
    await expectRefusal(await gateway('/team/lists', bearer(tokens.access_token)), 'TOKEN_REVOKED');
    await expectOauthError(await refresh(client, tokens.refresh_token), 400, 'invalid_grant');
    const after = await envelope(await gateway('/partner/apps', bearer(tokens.partner)));
    expect(after.data.apps[0].revoked_at).not.toBeNull();
  });

  it('by the client (RFC 7009) with its refresh token; unknown tokens answer 200, another client is refused', async () => {
    const tenant = await createTenant(platformKeys.demo, 'oauth rfc7009');
    const client = await registerClient();
    const other = await registerClient({ client_name: 'Other app' });
    const tokens = await grantTokens(tenant, client);
    const revoke = (who: { client_id: string }, token: string) =>
      gateway('/oauth/revoke', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, client_id: who.client_id }).toString(),
      });
    await expectOauthError(await revoke(other, tokens.refresh_token), 400, 'unauthorized_client');
    expect((await gateway('/team/lists', bearer(tokens.access_token))).status).toBe(200);
    expect((await revoke(client, 'apgr_nothing.atall')).status).toBe(200);
    expect((await revoke(client, tokens.refresh_token)).status).toBe(200);
    await expectRefusal(await gateway('/team/lists', bearer(tokens.access_token)), 'TOKEN_REVOKED');
    await expectOauthError(await refresh(client, tokens.refresh_token), 400, 'invalid_grant');
  });

  it('by the client with its access token', async () => {
    const tenant = await createTenant(platformKeys.demo, 'oauth rfc7009 access');
    const client = await registerClient();
    const tokens = await grantTokens(tenant, client);
    const res = await gateway('/oauth/revoke', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        token: tokens.access_token,
        token_type_hint: 'access_token',
        client_id: client.client_id,
      }).toString(),
    });
    expect(res.status).toBe(200);
    await expectRefusal(await gateway('/team/lists', bearer(tokens.access_token)), 'TOKEN_REVOKED');
  });
});
