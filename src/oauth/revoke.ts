/**
 * `POST /oauth/revoke` (RFC 7009; docs/OAUTH.md, "Revocation"): a client ends its own
 * grant with its refresh token (a spent one too) or its access token; the grant's token
 * is then refused everywhere within LEASE_MAX_MS, as any revoked token. An unknown token
 * is answered 200 like a known one (RFC 7009 2.2); another client's token is refused
 * (`unauthorized_client`) and left alone. A token that is no OAuth grant's (an operator's,
 * a partner's own key) is never revoked here.
 */
import { type Context, Hono } from 'hono';
import { auditContext } from '../admin/common';
import { GatewayError, ok } from '../errors';
import { isolateAdmission } from '../limits/admission';
import { guardFor } from '../objects/tenant/tenant-guard';
import { operationId } from '../observability/operation-id';
import { keyRing } from '../tenants/crypto';
import { checkOauthSecret, REFRESH_PREFIX } from '../tenants/oauth-secret';
import { memoizedStores } from '../tenants/stores';
import { checkPresentedToken } from '../tenants/token';
import type { HonoEnv } from '../types/context';
import type { OAuthClient } from '../types/wire';
import { clientCors, preflight } from './client-cors';
import { usedClient } from './clients';
import { formParams, required } from './params';

export function revokeRoutes(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();
  app.options('/oauth/revoke', preflight);
  app.post('/oauth/revoke', operationId('oauth.revoke'), async (c) => {
    c.header('Cache-Control', 'no-store');
    const params = await formParams(c);
    const client = await usedClient(c, params);
    clientCors(c, client);
    const outcome = await revoke(c, required(params, 'token'), client);
    if (outcome === 'other_client') {
      throw new GatewayError('OAUTH_UNAUTHORIZED_CLIENT', {
        message: 'This token was issued to another client',
      });
    }
    return c.json(ok({}), 200);
  });
  return app;
}

async function revoke(
  c: Context<HonoEnv>,
  token: string,
  client: OAuthClient,
): Promise<'revoked' | 'unknown' | 'other_client'> {
  const settings = c.get('settings');
  const ring = await keyRing(settings.KEY_ENCRYPTION_KEY);
  const ctx = auditContext(c, `oauth:${client.client_id}`);
  const now = Date.now();
  const refresh = await checkOauthSecret(ring, REFRESH_PREFIX, token);
  if (refresh) {
    const outcome = await guardFor(c.env, refresh.tenantId)
      .grants()
      .revokeByRefresh(refresh.tenantId, refresh.hash, client.client_id, now, ctx);
    if (outcome === 'revoked') isolateAdmission.forget(refresh.tenantId);
    return outcome;
  }
  const presented = await checkPresentedToken(ring, token);
  if (presented?.format !== 'tagged') return 'unknown';
  const stores = await memoizedStores(c.env, settings);
  const entry = await stores.tokens.find({ hash: presented.hash });
  const grant = entry?.record.grant;
  if (!entry || !grant) return 'unknown';
  if (grant.client_id !== client.client_id) return 'other_client';
  const { tenant_id: tenantId, id } = entry.record;
  await guardFor(c.env, tenantId).grants().revokeGrant(tenantId, id, client.client_id, now, ctx);
  isolateAdmission.forget(tenantId);
  stores.tokens.forget([entry]);
  return 'revoked';
}
