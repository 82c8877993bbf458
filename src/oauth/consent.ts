/**
 * The partner's consent (docs/OAUTH.md, "Consent"): the portal's page, signed in with the
 * partner's own token (a portal link's, or any token with `partner:manage`), shows an
 * authorization request (`GET /oauth/consent?request=`: the app's name, its redirect
 * host, the scopes it asks for, those the tenant may grant) and sends the partner's
 * answer (`POST /oauth/consent`): approved, with the scopes left checked, or denied.
 * Either way the answer is where the page goes next: the app's registered redirect URI
 * with a code (or `error=access_denied`), its `state` and the issuer. The grant is the
 * partner's tenant's, never more than the operator lets that tenant grant, whatever the
 * partner's own token holds.
 */
import { type Context, Hono } from 'hono';
import * as z from 'zod';
import { GatewayError, ok } from '../errors';
import { log } from '../log';
import { validated } from '../middleware/validate';
import { oauthClients } from '../objects/clients/oauth-clients';
import { guardFor } from '../objects/tenant/tenant-guard';
import { operationId } from '../observability/operation-id';
import { catalogOf } from '../operations/catalog';
import { partnerToken } from '../partner/routes';
import { keyRing } from '../tenants/crypto';
import { CODE_PREFIX, mintOauthSecret } from '../tenants/oauth-secret';
import { redirectHostOf, webOriginOf } from '../tenants/redirect-uri';
import { expandScopes, grantable } from '../tenants/scopes';
import { memoizedStores } from '../tenants/stores';
import { newTokenId } from '../tenants/token-store';
import type { HonoEnv } from '../types/context';
import type { ConsentAnswer, ConsentView, OAuthClient } from '../types/wire';
import { type AuthorizationRequest, openAuthorizationRequest, redirectWith } from './request';
import { CODE_TTL_MS, issuerOf } from './server';

const PRIVATE = { 'Cache-Control': 'private, no-store' };

const decisionBody = z.strictObject({
  request: z.string().max(8192),
  approve: z.boolean(),
  /** The scopes the partner left checked (absent: all it was offered). */
  scopes: z.array(z.string().max(64)).max(128).optional(),
});

export function consentRoutes(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();
  app.get('/oauth/consent', operationId('oauth.consent'), ...partnerToken, async (c) => {
    const { request, client } = await pending(c, c.req.query('request') ?? '');
    return c.json(ok<ConsentView>(await view(c, request, client)), 200, PRIVATE);
  });

  app.post(
    '/oauth/consent',
    operationId('oauth.consent'),
    ...partnerToken,
    validated('json', decisionBody),
    async (c) => {
      const body = c.req.valid('json');
      const { request, client } = await pending(c, body.request);
      const back = (params: Record<string, string>) =>
        c.json(
          ok<ConsentAnswer>({
            redirect_to: redirectWith(request.ru, {
              ...params,
              ...(request.st !== undefined ? { state: request.st } : {}),
              iss: issuerOf(c),
            }),
          }),
          200,
          PRIVATE,
        );
      if (!body.approve) {
        return back({ error: 'access_denied', error_description: 'The partner denied access' });
      }
      const tenantId = c.get('tenant').id;
      const now = Date.now();
      const tokenId = newTokenId();
      const ring = await keyRing(c.get('settings').KEY_ENCRYPTION_KEY);
      const code = await mintOauthSecret(ring, CODE_PREFIX, tenantId);
      const outcome = await guardFor(c.env, tenantId)
        .grants()
        .consent({
          tenantId,
          tokenId,
          client: { id: client.client_id, name: client.client_name, kind: client.kind },
          redirectUri: request.ru,
          asked: request.sc,
          chosen: body.scopes ?? null,
          resource: request.res,
          codeHash: code.hash,
          codeChallenge: request.cc,
          grantedBy: `token:${c.get('token').id}`,
          groups: [...catalogOf(c.get('settings')).groups],
          now,
          codeTtlMs: CODE_TTL_MS,
        });
      if (outcome.kind === 'dynamic_refused') {
        return back({
          error: 'unauthorized_client',
          error_description: 'This partner does not take apps that registered themselves',
        });
      }
      if (outcome.kind === 'invalid_scope') {
        throw new GatewayError('OAUTH_INVALID_SCOPE', {
          message: 'Choose among the scopes offered',
          details: { allowed: outcome.allowed },
        });
      }
      await oauthClients(c.env).use(client.client_id, now, true);
      // Its browser calls come from the redirect URI's origin: preflights must pass.
      const origin = webOriginOf(request.ru);
      if (origin) {
        const stores = await memoizedStores(c.env, c.get('settings'));
        const until = now + c.get('settings').OAUTH_REFRESH_TOKEN_TTL_S * 1000;
        // Written again by each approval: KV refusing it (a write a second per key) fails
        // nothing.
        await stores.origins.allowForOAuth(origin, until).catch((err: unknown) =>
          log.warn('oauth.origin_not_written', {
            request_id: c.get('requestId'),
            error: err instanceof Error ? err.name : typeof err,
          }),
        );
      }
      return back({ code: code.secret });
    },
  );
  return app;
}

/** The checked request and its client, still registered. */
async function pending(
  c: Context<HonoEnv>,
  signed: string,
): Promise<{ request: AuthorizationRequest; client: OAuthClient }> {
  const ring = await keyRing(c.get('settings').KEY_ENCRYPTION_KEY);
  const request = await openAuthorizationRequest(ring, signed, Date.now());
  const client = await oauthClients(c.env).client(request.cid);
  if (!client) {
    throw new GatewayError('OAUTH_INVALID_CLIENT', {
      message: 'This app is no longer registered with the gateway',
    });
  }
  return { request, client };
}

/** What the consent page shows of a request, for the signed-in partner's tenant. */
async function view(
  c: Context<HonoEnv>,
  request: AuthorizationRequest,
  client: OAuthClient,
): Promise<ConsentView> {
  const tenant = c.get('tenant');
  const access = await guardFor(c.env, tenant.id).grants().access();
  const groups = catalogOf(c.get('settings')).groups;
  const offered = grantable(request.sc, access.grantable_scopes, groups).scopes;
  const asked = expandScopes(request.sc, groups).scopes;
  const refused = client.kind === 'dynamic' && !access.dynamic_clients;
  return {
    tenant: { id: tenant.id, name: tenant.name },
    client: { id: client.client_id, name: client.client_name, kind: client.kind },
    redirect_uri: request.ru,
    redirect_host: redirectHostOf(request.ru),
    resource: request.res,
    scopes_asked: request.sc,
    scopes_offered: offered,
    scopes_withheld: asked.filter((s) => !offered.includes(s)),
    refusal: refused
      ? 'The operator does not let this account approve apps that registered themselves.'
      : offered.length === 0
        ? 'None of the scopes this app asks for may be granted by this account.'
        : null,
    expires_at: new Date(request.exp).toISOString(),
  };
}
