/**
 * Every way an OAuth request is refused (docs/OAUTH.md, "Refusals"; RFC 6749, 7636,
 * 8707, 9700): the error the RFC names, and never a redirect to a URI the client did not
 * register. Time moves by injection (only Date is faked), never by sleeping.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  admin,
  asTenant,
  createTenant,
  envelope,
  expectRefusal,
  gateway,
  platformKeys,
  type TestTenant,
} from './helpers';
import {
  authorize,
  type Client,
  codeFor,
  consentRequestOf,
  consentView,
  decide,
  expectOauthError,
  GATEWAY,
  grantTokens,
  partnerToken,
  pkce,
  REDIRECT,
  registerClient,
  tokenRequest,
} from './oauth-helpers';

beforeEach(() => vi.useFakeTimers({ toFake: ['Date'], now: Date.now() }));
afterEach(() => vi.useRealTimers());

let tenant: TestTenant;
let client: Client;
/** A client the operator registered: refusals after its redirect URI is checked go back to it. */
let vetted: Client;
beforeEach(async () => {
  tenant = await createTenant(platformKeys.demo, 'oauth refusals');
  client = await registerClient();
  const made = await admin('/oauth/clients', {
    method: 'POST',
    body: JSON.stringify({ client_name: 'Vetted', redirect_uris: [REDIRECT] }),
  });
  vetted = (await envelope(made)).data;
});

async function authorizeParams(
  extra: Record<string, string | undefined> = {},
  who: () => Client = () => client,
) {
  const { challenge } = await pkce();
  const params: Record<string, string> = {
    response_type: 'code',
    client_id: who().client_id,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'st-123',
  };
  for (const [name, value] of Object.entries(extra)) {
    if (value === undefined) delete params[name];
    else params[name] = value;
  }
  return params;
}

/** A refusal sent back to the registered redirect URI, with the state and the issuer. */
function expectRedirectedError(res: Response, error: string) {
  expect(res.status).toBe(302);
  const location = new URL(res.headers.get('location') ?? '');
  expect(`${location.origin}${location.pathname}`).toBe(REDIRECT);
  expect(location.searchParams.get('error')).toBe(error);
  expect(location.searchParams.get('state')).toBe('st-123');
  expect(location.searchParams.get('iss')).toBe(GATEWAY);
  expect(location.searchParams.get('code')).toBeNull();
  return location.searchParams.get('error_description');
}

function exchange(form: Record<string, string>, who: Client = client) {
  return tokenRequest({
    grant_type: 'authorization_code',
    redirect_uri: REDIRECT,
    client_id: who.client_id,
    ...form,
  });
}

describe('the authorization endpoint', () => {
  it('answers an unknown client itself, never redirecting', async () => {
    const res = await authorize(await authorizeParams({ client_id: 'cli_nobody' }));
    expect(res.headers.get('location')).toBeNull();
    await expectOauthError(res, 400, 'invalid_request');
  });

  it.each([
    ['another host', 'https://evil.example/callback'],
    ['another path', `${REDIRECT}/more`],
    ['an added query', `${REDIRECT}?next=https://evil.example`],
    ['a trailing slash', `${REDIRECT}/`],
    ['another scheme', REDIRECT.replace('https:', 'http:')],
  ])('refuses a redirect_uri with %s, never redirecting (an open redirect)', async (_, uri) => {
    const res = await authorize(await authorizeParams({ redirect_uri: uri }));
    expect(res.headers.get('location')).toBeNull();
    const body = await expectOauthError(res, 400, 'invalid_request');
    expect(body.error_description).toMatch(/redirect_uri/);
  });

  const asVetted = () => vetted;

  it("refuses plain PKCE, and a request without PKCE, back at an operator's client's registered URI", async () => {
    const plain = await authorize(
      await authorizeParams({ code_challenge_method: 'plain' }, asVetted),
    );
    expect(expectRedirectedError(plain, 'invalid_request')).toMatch(/S256/);
    const none = await authorize(
      await authorizeParams(
        { code_challenge: undefined, code_challenge_method: undefined },
        asVetted,
      ),
    );
    expect(expectRedirectedError(none, 'invalid_request')).toMatch(/PKCE/);
    // No method named is plain (RFC 7636 4.3): refused too.
    const unnamed = await authorize(
      await authorizeParams({ code_challenge_method: undefined }, asVetted),
    );
    expectRedirectedError(unnamed, 'invalid_request');
  });

  it('refuses another response type, an unknown scope and a resource of elsewhere', async () => {
    expectRedirectedError(
      await authorize(await authorizeParams({ response_type: 'token' }, asVetted)),
      'unsupported_response_type',
    );
    expectRedirectedError(
      await authorize(await authorizeParams({ scope: 'teams:read everything:admin' }, asVetted)),
      'invalid_scope',
    );
    expectRedirectedError(
      await authorize(
        await authorizeParams({ resource: 'https://elsewhere.example/mcp' }, asVetted),
      ),
      'invalid_target',
    );
  });

  it('answers a self-registered client its refusals itself: no bounce to a site anyone could have registered', async () => {
    for (const [extra, error] of [
      [{ code_challenge_method: 'plain' }, 'invalid_request'],
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ scope: 'nothing:here' }, 'invalid_scope'],
    ] as const) {
      const res = await authorize(await authorizeParams(extra));
      expect(res.headers.get('location')).toBeNull();
      await expectOauthError(res, 400, error);
    }
  });

  it('refuses a parameter sent twice', async () => {
    const params = new URLSearchParams(await authorizeParams());
    params.append('redirect_uri', 'https://evil.example/callback');
    const res = await gateway(`/oauth/authorize?${params}`, { redirect: 'manual' });
    expect(res.headers.get('location')).toBeNull();
    await expectOauthError(res, 400, 'invalid_request');
  });
});

describe('the consent', () => {
  it("needs the partner's partner:manage token: a usage-only portal link or an app's token cannot approve", async () => {
    const request = consentRequestOf(await authorize(await authorizeParams()));
    const link = await envelope(
      await gateway(`/admin/tenants/${tenant.id}/portal-links`, {
        method: 'POST',
        headers: {
          authorization: 'Bearer test-admin-token-0123456789',
          'content-type': 'application/json',
        },
        body: JSON.stringify({}),
      }),
    );
    const usageOnly = new URL(link.data.url).hash.replace(/^#token=/, '');
    await expectRefusal(await consentView(usageOnly, request), 'SCOPE_REQUIRED');
    await expectRefusal(await decide(usageOnly, request, true), 'SCOPE_REQUIRED');
    const app = await grantTokens(tenant, client);
    await expectRefusal(await decide(app.access_token, request, true), 'SCOPE_REQUIRED');
  });

  it('refuses a request the gateway did not sign, and one that has expired', async () => {
    const partner = await partnerToken(tenant);
    const request = consentRequestOf(await authorize(await authorizeParams()));
    const [body, mac] = request.split('.');
    const forged = `${body?.slice(0, -2)}AA.${mac}`;
    await expectOauthError(await decide(partner, forged, true), 400, 'invalid_request');
    vi.setSystemTime(Date.now() + 11 * 60_000);
    const late = await expectOauthError(
      await decide(partner, request, true),
      400,
      'invalid_request',
    );
    expect(late.error_description).toMatch(/expired/);
  });

  it('shows what the app asks for, and refuses scopes beyond what it offers', async () => {
    const partner = await partnerToken(tenant);
    const request = consentRequestOf(
      await authorize(await authorizeParams({ scope: 'teams:read apikeys:admin' })),
    );
    const { body } = await consentView(partner, request);
    expect(body.data).toMatchObject({
      client: { id: client.client_id, name: 'Test app', kind: 'dynamic' },
      redirect_host: 'app.example',
      scopes_asked: ['teams:read', 'apikeys:admin'],
      scopes_offered: ['teams:read'],
      scopes_withheld: expect.arrayContaining(['apikeys:admin']),
      refusal: null,
    });
    await expectOauthError(
      await decide(partner, request, true, ['teams:read', 'apikeys:admin']),
      400,
      'invalid_scope',
    );
  });

  it('sends a denial back as access_denied with the state', async () => {
    const partner = await partnerToken(tenant);
    const request = consentRequestOf(await authorize(await authorizeParams()));
    const { body } = await decide(partner, request, false);
    const back = new URL(body.data.redirect_to);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('st-123');
    expect(back.searchParams.get('code')).toBeNull();
  });
});

describe('the token endpoint', () => {
  it('refuses a code used twice, and revokes what the first use issued', async () => {
    const { code, verifier } = await codeFor(tenant, client);
    const first = await exchange({ code, code_verifier: verifier });
    const tokens = (await first.json()) as { access_token: string };
    expect(first.status).toBe(200);
    const again = await expectOauthError(
      await exchange({ code, code_verifier: verifier }),
      400,
      'invalid_grant',
    );
    expect(again.error_description).toMatch(/used before/);
    await expectRefusal(
      await asTenant({ ...tenant, token: tokens.access_token }, '/team/lists'),
      'TOKEN_REVOKED',
    );
  });

  it('takes a code once when two exchanges of it arrive together: the other ends the grant', async () => {
    // Both requests are in flight at once; the tenant's guard decides one, then the other.
    const { code, verifier } = await codeFor(tenant, client);
    const answers = await Promise.all([
      exchange({ code, code_verifier: verifier }),
      exchange({ code, code_verifier: verifier }),
    ]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400]);
    const won = answers.find((r) => r.status === 200) as Response;
    const lost = answers.find((r) => r.status === 400) as Response;
    await expectOauthError(lost, 400, 'invalid_grant');
    const tokens = (await won.json()) as { access_token: string };
    await expectRefusal(
      await asTenant({ ...tenant, token: tokens.access_token }, '/team/lists'),
      'TOKEN_REVOKED',
    );
  });

  it('takes a refresh token once when two refreshes of it arrive together, and the reuse ends the grant', async () => {
    const first = await grantTokens(tenant, client);
    const refresh = () =>
      tokenRequest({
        grant_type: 'refresh_token',
        refresh_token: first.refresh_token,
        client_id: client.client_id,
      });
    const answers = await Promise.all([refresh(), refresh()]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400]);
    const won = (await (answers.find((r) => r.status === 200) as Response).json()) as {
      access_token: string;
    };
    await expectRefusal(
      await asTenant({ ...tenant, token: won.access_token }, '/team/lists'),
      'TOKEN_REVOKED',
    );
  });

  it('refuses a wrong verifier, and the code still works with the right one', async () => {
    const { code, verifier } = await codeFor(tenant, client);
    const { verifier: wrong } = await pkce();
    const refused = await expectOauthError(
      await exchange({ code, code_verifier: wrong }),
      400,
      'invalid_grant',
    );
    expect(refused.error_description).toMatch(/code_verifier/);
    expect((await exchange({ code, code_verifier: verifier })).status).toBe(200);
  });

  it('refuses a code presented by another client, or with another redirect_uri', async () => {
    const other = await registerClient({ client_name: 'Other', redirect_uris: [REDIRECT] });
    const { code, verifier } = await codeFor(tenant, client);
    const stolen = await expectOauthError(
      await exchange({ code, code_verifier: verifier }, other),
      400,
      'invalid_grant',
    );
    expect(stolen.error_description).toMatch(/another client/);
    await expectOauthError(
      await exchange({ code, code_verifier: verifier, redirect_uri: `${REDIRECT}x` }),
      400,
      'invalid_grant',
    );
    expect((await exchange({ code, code_verifier: verifier })).status).toBe(200);
  });

  it('refuses a code past its 60 seconds', async () => {
    const { code, verifier } = await codeFor(tenant, client);
    vi.setSystemTime(Date.now() + 61_000);
    const late = await expectOauthError(
      await exchange({ code, code_verifier: verifier }),
      400,
      'invalid_grant',
    );
    expect(late.error_description).toMatch(/expired/);
  });

  it('refuses a code for one resource exchanged for another (mixed-up resource)', async () => {
    const { code, verifier } = await codeFor(tenant, client, { resource: `${GATEWAY}/mcp` });
    await expectOauthError(
      await exchange({ code, code_verifier: verifier, resource: GATEWAY }),
      400,
      'invalid_target',
    );
    await expectOauthError(
      await exchange({ code, code_verifier: verifier, resource: 'https://elsewhere.example' }),
      400,
      'invalid_target',
    );
    expect(
      (await exchange({ code, code_verifier: verifier, resource: `${GATEWAY}/mcp` })).status,
    ).toBe(200);
  });

  it('refuses a forged code without asking any guard, an unknown client, a secret, a repeat and a JSON body', async () => {
    await expectOauthError(
      await exchange({
        code: `apgc_${tenant.id}.${'A'.repeat(52)}`,
        code_verifier: 'v'.repeat(43),
      }),
      400,
      'invalid_grant',
    );
    await expectOauthError(
      await exchange(
        { code: 'x', code_verifier: 'v'.repeat(43) },
        { ...client, client_id: 'cli_nobody' },
      ),
      401,
      'invalid_client',
    );
    await expectOauthError(
      await tokenRequest(
        { grant_type: 'authorization_code', code: 'x', client_id: client.client_id },
        { authorization: `Basic ${btoa(`${client.client_id}:secret`)}` },
      ),
      401,
      'invalid_client',
    );
    const twice = await gateway('/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=authorization_code&client_id=${client.client_id}&code=a&code=b`,
    });
    await expectOauthError(twice, 400, 'invalid_request');
    const json = await gateway('/oauth/token', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code', client_id: client.client_id }),
    });
    await expectOauthError(json, 400, 'invalid_request');
    await expectOauthError(
      await tokenRequest({ grant_type: 'password', client_id: client.client_id }),
      400,
      'unsupported_grant_type',
    );
  });

  it("answers a browser only at the client's own origin", async () => {
    const { code, verifier } = await codeFor(tenant, client);
    const ok = await exchange({ code, code_verifier: verifier });
    expect(ok.headers.get('access-control-allow-origin')).toBeNull();
    const { code: code2, verifier: verifier2 } = await codeFor(tenant, client);
    const elsewhere = await tokenRequest(
      {
        grant_type: 'authorization_code',
        code: code2,
        code_verifier: verifier2,
        redirect_uri: REDIRECT,
        client_id: client.client_id,
      },
      { origin: 'https://evil.example' },
    );
    expect(elsewhere.headers.get('access-control-allow-origin')).toBeNull();
    const { code: code3, verifier: verifier3 } = await codeFor(tenant, client);
    const own = await tokenRequest(
      {
        grant_type: 'authorization_code',
        code: code3,
        code_verifier: verifier3,
        redirect_uri: REDIRECT,
        client_id: client.client_id,
      },
      { origin: 'https://app.example' },
    );
    expect(own.status).toBe(200);
    expect(own.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(own.headers.get('cache-control')).toBe('no-store');
  });
});
