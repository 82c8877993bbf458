/**
 * `POST /oauth/token` (RFC 6749 3.2, 4.1.3, 6; docs/OAUTH.md, "The flow"): a public
 * client (no secret: `client_id` in the form) exchanges its code, with the PKCE
 * verifier, for an access token and a refresh token, and later a refresh token for new
 * ones. The tenant's TenantGuard decides (its grants part): a code works once, within
 * CODE_TTL_MS, for the client and redirect URI it was issued to, with the verifier of its
 * S256 challenge; a refresh token works once, and a used one presented again ends its
 * grant. The access token is an ordinary gateway token of the grant (`apgw_…`, at most
 * OAUTH_ACCESS_TOKEN_TTL_S), so limits, usage, the request log and revocation are a
 * token's. A browser app may call it from its redirect URIs' origins (CORS).
 */
import { type Context, Hono } from 'hono';
import { auditContext } from '../admin/common';
import { GatewayError } from '../errors';
import { isolateAdmission } from '../limits/admission';
import type { Issued, TokenRefusal } from '../objects/tenant/grants/grants-part';
import { type GuardParts, guardFor } from '../objects/tenant/tenant-guard';
import { operationId } from '../observability/operation-id';
import { keyRing, toBase64Url } from '../tenants/crypto';
import {
  CODE_PREFIX,
  checkOauthSecret,
  mintOauthSecret,
  type OauthSecretKind,
  REFRESH_PREFIX,
} from '../tenants/oauth-secret';
import { memoizedStores } from '../tenants/stores';
import type { HonoEnv } from '../types/context';
import type { OAuthClient } from '../types/wire';
import { clientCors, preflight } from './client-cors';
import { usedClient } from './clients';
import { formParams, type Params, required } from './params';
import { resourceNamed } from './server';

const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };
/** RFC 7636 4.1: 43 to 128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

export function tokenRoutes(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();
  app.options('/oauth/token', preflight);
  app.post('/oauth/token', operationId('oauth.token'), async (c) => {
    for (const [name, value] of Object.entries(NO_STORE)) c.header(name, value);
    if (c.req.header('authorization')) {
      throw new GatewayError('OAUTH_INVALID_CLIENT', {
        message: 'Clients here are public: send client_id in the form, no secret',
      });
    }
    const params = await formParams(c);
    const client = await usedClient(c, params);
    clientCors(c, client);
    const grantType = required(params, 'grant_type');
    if (grantType === 'authorization_code') return answer(c, await exchange(c, params, client));
    if (grantType === 'refresh_token') return answer(c, await refresh(c, params, client));
    throw new GatewayError('OAUTH_UNSUPPORTED_GRANT_TYPE', {
      message: 'grant_type is authorization_code or refresh_token',
    });
  });
  return app;
}

/** What the guard decided, and the secrets made for it (answered only if issued). */
interface Outcome {
  issued: Issued;
  token: string;
  refresh: string;
  tenantId: string;
}

async function exchange(
  c: Context<HonoEnv>,
  params: Params,
  client: OAuthClient,
): Promise<Outcome> {
  const code = required(params, 'code');
  const verifier = required(params, 'code_verifier');
  const redirectUri = required(params, 'redirect_uri');
  if (!VERIFIER.test(verifier)) {
    throw new GatewayError('OAUTH_INVALID_REQUEST', {
      message: 'code_verifier is 43 to 128 characters of A-Z a-z 0-9 - . _ ~',
    });
  }
  const { tenantId, hash } = await presentedSecret(c, CODE_PREFIX, code);
  const challenge = await s256(verifier);
  return issue(c, tenantId, (grants, { minted, refreshHash }) =>
    grants.exchange({
      tenantId,
      codeHash: hash,
      clientId: client.client_id,
      redirectUri,
      challenge,
      resource: resourceOf(c, params),
      minted,
      refreshHash,
      ...terms(c, client),
    }),
  );
}

async function refresh(c: Context<HonoEnv>, params: Params, client: OAuthClient): Promise<Outcome> {
  const refreshToken = required(params, 'refresh_token');
  const { tenantId, hash } = await presentedSecret(c, REFRESH_PREFIX, refreshToken);
  const scope = params.get('scope');
  return issue(c, tenantId, (grants, { minted, refreshHash }) =>
    grants.refresh({
      tenantId,
      refreshHash: hash,
      clientId: client.client_id,
      resource: resourceOf(c, params),
      scopes: scope ? scope.split(' ').filter(Boolean) : null,
      minted,
      newRefreshHash: refreshHash,
      ...terms(c, client),
    }),
  );
}

/**
 * New secrets for a grant of `tenantId`, and what its guard decided with them (`decide`:
 * the exchange or the refresh); the secrets are answered only if issued.
 */
async function issue(
  c: Context<HonoEnv>,
  tenantId: string,
  decide: (
    grants: ReturnType<GuardParts['grants']>,
    made: Pick<Awaited<ReturnType<typeof newSecrets>>, 'minted' | 'refreshHash'>,
  ) => Promise<Issued>,
): Promise<Outcome> {
  const { token, refresh, minted, refreshHash } = await newSecrets(c, tenantId);
  const issued = await decide(guardFor(c.env, tenantId).grants(), { minted, refreshHash });
  return { issued, refresh, tenantId, token };
}

/** The new access token's secret and the new refresh token (kept only if issued). */
async function newSecrets(c: Context<HonoEnv>, tenantId: string) {
  const stores = await memoizedStores(c.env, c.get('settings'));
  const { token, ...minted } = await stores.tokens.mint();
  const ring = await keyRing(c.get('settings').KEY_ENCRYPTION_KEY);
  const { secret, hash } = await mintOauthSecret(ring, REFRESH_PREFIX, tenantId);
  return { token, refresh: secret, minted, refreshHash: hash };
}

/** What invalid_grant says of a code or a refresh token the gateway did not make. */
const UNKNOWN: Record<OauthSecretKind, string> = {
  [CODE_PREFIX]: 'unknown authorization code',
  [REFRESH_PREFIX]: 'unknown refresh token',
};

/** A code or refresh token this gateway made (its tenant, its hash); invalid_grant if not. */
async function presentedSecret(c: Context<HonoEnv>, kind: OauthSecretKind, secret: string) {
  const ring = await keyRing(c.get('settings').KEY_ENCRYPTION_KEY);
  const presented = await checkOauthSecret(ring, kind, secret);
  if (!presented) throw invalidGrant(UNKNOWN[kind]);
  return presented;
}

/** What every grant decision is also told: the tokens' lives, the time, who asked (audit). */
function terms(c: Context<HonoEnv>, client: OAuthClient) {
  const settings = c.get('settings');
  return {
    accessTtlMs: settings.OAUTH_ACCESS_TOKEN_TTL_S * 1000,
    refreshTtlMs: settings.OAUTH_REFRESH_TOKEN_TTL_S * 1000,
    now: Date.now(),
    ctx: auditContext(c, `oauth:${client.client_id}`),
  };
}

/** The `resource` of the token request (null: the one authorized); refused if not ours. */
function resourceOf(c: Context<HonoEnv>, params: Params): string | null {
  const named = params.get('resource');
  if (named === undefined) return null;
  const resource = resourceNamed(c, named);
  if (resource === null) {
    throw new GatewayError('OAUTH_INVALID_TARGET', {
      message: 'resource must be this gateway or its /mcp',
    });
  }
  return resource;
}

/** RFC 6749 5.1 on success; a refusal in its words (5.2), and this isolate sees any end at once. */
function answer(c: Context<HonoEnv>, { issued, refresh, tenantId, token }: Outcome): Response {
  if (issued.kind !== 'issued') {
    // A reuse may have just ended a grant: this isolate's next request sees it.
    isolateAdmission.forget(tenantId);
    throw refusal(issued);
  }
  const { record } = issued.entry;
  // The request log counts it as the grant's (its tenant's usage history).
  c.set('principal', { tenantId, tokenId: record.id });
  const expiresAt = record.expires_at ? Date.parse(record.expires_at) : Date.now();
  return c.json(
    {
      access_token: token,
      token_type: 'Bearer',
      expires_in: Math.max(0, Math.round((expiresAt - Date.now()) / 1000)),
      refresh_token: refresh,
      scope: record.scopes.join(' '),
    },
    200,
  );
}

function refusal(r: TokenRefusal): GatewayError {
  switch (r.kind) {
    case 'invalid_grant':
      return invalidGrant(r.why);
    case 'invalid_target':
      return new GatewayError('OAUTH_INVALID_TARGET', { message: r.why });
    case 'invalid_scope':
      return new GatewayError('OAUTH_INVALID_SCOPE', { message: r.why });
  }
}

const invalidGrant = (message: string) => new GatewayError('OAUTH_INVALID_GRANT', { message });

/** BASE64URL(SHA-256(verifier)) (RFC 7636 4.2). */
async function s256(verifier: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier));
  return toBase64Url(new Uint8Array(digest));
}
