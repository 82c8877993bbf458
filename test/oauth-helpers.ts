/**
 * An OAuth client as tests drive it (docs/OAUTH.md): registration, PKCE, the
 * authorization request, the partner's consent as the portal sends it, and the token
 * endpoint, each an ordinary request to the gateway Worker.
 */
import { expect } from 'vitest';
import { toBase64Url } from '../src/tenants/crypto';
import { admin, envelope, gateway, type TestTenant } from './helpers';

export const GATEWAY = 'https://gateway.test';
export const APP_ORIGIN = 'https://app.example';
export const REDIRECT = `${APP_ORIGIN}/callback`;

export interface Client {
  client_id: string;
  redirect_uris: string[];
}

/** A public client, registered as an app registers itself (RFC 7591). */
export async function registerClient(
  metadata: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<Client> {
  const res = await register(
    { client_name: 'Test app', redirect_uris: [REDIRECT], ...metadata },
    headers,
  );
  const body = (await res.json()) as Client;
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body;
}

export function register(body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return gateway('/oauth/register', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'cf-connecting-ip': `198.51.100.${Math.floor(Math.random() * 250) + 1}`,
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** A PKCE pair (RFC 7636): a verifier and its S256 challenge. */
export async function pkce(): Promise<{ verifier: string; challenge: string }> {
  const verifier = toBase64Url(crypto.getRandomValues(new Uint8Array(32)));
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
  return { verifier, challenge: toBase64Url(new Uint8Array(digest)) };
}

/** GET /oauth/authorize with these parameters; the answer as the browser gets it (no redirect followed). */
export function authorize(params: Record<string, string>): Promise<Response> {
  return gateway(`/oauth/authorize?${new URLSearchParams(params)}`, { redirect: 'manual' });
}

/** The signed request the portal's consent page is sent with. */
export function consentRequestOf(res: Response): string {
  expect(res.status).toBe(302);
  const location = new URL(res.headers.get('location') ?? '');
  expect(`${location.origin}${location.pathname}`).toBe(`${GATEWAY}/portal/`);
  const request = location.hash.replace(/^#authorize=/, '');
  expect(request.length).toBeGreaterThan(20);
  return request;
}

/** A portal link's token that may manage the tenant's apps and keys (partner:manage). */
export async function partnerToken(tenant: TestTenant): Promise<string> {
  const res = await admin(`/tenants/${tenant.id}/portal-links`, {
    method: 'POST',
    body: JSON.stringify({ manage: true }),
  });
  const body = await envelope(res);
  expect(res.status, JSON.stringify(body)).toBe(201);
  return new URL(body.data.url).hash.replace(/^#token=/, '');
}

/** What the consent page shows (GET /oauth/consent). */
export async function consentView(token: string, request: string) {
  const res = await gateway(`/oauth/consent?request=${encodeURIComponent(request)}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return { res, body: await envelope(res) };
}

/** The partner's answer as the portal sends it (POST /oauth/consent). */
export async function decide(token: string, request: string, approve: boolean, scopes?: string[]) {
  const res = await gateway('/oauth/consent', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ request, approve, ...(scopes ? { scopes } : {}) }),
  });
  return { res, body: await envelope(res) };
}

/** POST /oauth/token with a form. */
export function tokenRequest(
  form: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return gateway('/oauth/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form).toString(),
  });
}

export interface Tokens {
  access_token: string;
  refresh_token: string;
  token_type: string;
  expires_in: number;
  scope: string;
}

/** The way up to a code: authorize, consent (approved), the code and state sent back. */
export async function codeFor(
  tenant: TestTenant,
  client: Client,
  opts: { scope?: string; resource?: string; chosen?: string[]; redirect?: string } = {},
) {
  const { verifier, challenge } = await pkce();
  const redirect = opts.redirect ?? client.redirect_uris[0] ?? REDIRECT;
  const state = crypto.randomUUID();
  const res = await authorize({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: redirect,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state,
    ...(opts.scope ? { scope: opts.scope } : {}),
    ...(opts.resource ? { resource: opts.resource } : {}),
  });
  const request = consentRequestOf(res);
  const partner = await partnerToken(tenant);
  const decided = await decide(partner, request, true, opts.chosen);
  expect(decided.res.status, JSON.stringify(decided.body)).toBe(200);
  const back = new URL(decided.body.data.redirect_to);
  expect(back.href.split('?')[0]).toBe(redirect);
  expect(back.searchParams.get('state')).toBe(state);
  expect(back.searchParams.get('iss')).toBe(GATEWAY);
  const code = back.searchParams.get('code') ?? '';
  expect(code).toMatch(/^apgc_/);
  return { code, verifier, redirect, partner };
}

/** The whole flow: a code exchanged for tokens. */
export async function grantTokens(
  tenant: TestTenant,
  client: Client,
  opts: Parameters<typeof codeFor>[2] = {},
): Promise<Tokens & { partner: string }> {
  const { code, verifier, redirect, partner } = await codeFor(tenant, client, opts);
  const res = await tokenRequest({
    grant_type: 'authorization_code',
    code,
    code_verifier: verifier,
    redirect_uri: redirect,
    client_id: client.client_id,
  });
  const body = (await res.json()) as Tokens;
  expect(res.status, JSON.stringify(body)).toBe(200);
  return { ...body, partner };
}

/** An OAuth error answer: its status, RFC 6749 `error`, and the gateway's envelope code. */
export async function expectOauthError(
  answer: Response | { res: Response; body: unknown },
  status: number,
  error: string,
) {
  const res = answer instanceof Response ? answer : answer.res;
  const body = (answer instanceof Response ? await res.json() : answer.body) as {
    error: string;
    error_description: string;
    code: number;
  };
  expect({ status: res.status, error: body.error }, body.error_description).toEqual({
    status,
    error,
  });
  expect(body.code).toBeGreaterThan(0);
  return body;
}
