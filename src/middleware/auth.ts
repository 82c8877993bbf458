/**
 * Authentication. A tenant token may arrive as `Authorization: Bearer <token>`,
 * as a bare `Authorization: <token>` (what the platform's own clients send),
 * or as `x-api-key: <token>`. A browser token (`apgb_…`) comes the same way,
 * or, on the WebSocket route, in `Sec-WebSocket-Protocol` or `?access_token=`,
 * since browsers cannot set headers on a WebSocket.
 *
 * @example app.get('/team/lists', tenantAuth(), handler)
 */
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { BROWSER_TOKEN_PREFIX, verifyBrowserToken } from '../browser/token';
import type { HonoEnv } from '../env';
import { GatewayError } from '../errors';
import type { RouteSpec } from '../routes/types';
import { keyRing } from '../tenants/crypto';
import { hasScope, requiredScope } from '../tenants/scopes';
import { type TenantStore, tenantStore } from '../tenants/store';
import { hashToken, isWellFormedToken } from '../tenants/token';
import type { Tenant, TokenRecord } from '../tenants/types';

export function tenantAuth(opts: { websocket?: boolean } = {}) {
  return createMiddleware<HonoEnv>(async function tenantAuth(c, next) {
    const token = presentedToken(c, opts.websocket ?? false);
    if (!token)
      throw new GatewayError(
        'MISSING_TOKEN',
        'Missing gateway token: send Authorization: Bearer <token>',
      );
    const store = await tenantStore(c.env, c.var.settings, true);
    const { tenant, record } = token.startsWith(BROWSER_TOKEN_PREFIX)
      ? await browserToken(c, store, token)
      : await tenantToken(store, token);
    if (tenant.status !== 'active') throw new GatewayError('TENANT_DISABLED');

    // A browser may only call from an origin its tenant allows.
    const origin = c.req.header('origin');
    if (origin && !(tenant.cors_origins ?? []).includes(origin)) {
      throw new GatewayError(
        'ORIGIN_NOT_ALLOWED',
        `Origin ${origin} is not allowed for this tenant`,
      );
    }
    c.set('tenant', tenant);
    c.set('token', record);
    await next();
  });
}

async function tenantToken(
  store: TenantStore,
  token: string,
): Promise<{ tenant: Tenant; record: TokenRecord }> {
  // Shape and checksum first: garbage never costs a KV read.
  if (!isWellFormedToken(token)) throw new GatewayError('INVALID_TOKEN', 'Malformed gateway token');
  const record = await store.findToken(await hashToken(token));
  if (!record) throw new GatewayError('INVALID_TOKEN', 'Unknown gateway token');
  if (record.expires_at && Date.parse(record.expires_at) <= Date.now())
    throw new GatewayError('TOKEN_EXPIRED');
  const tenant = await store.getTenant(record.tenant_id);
  if (!tenant) throw new GatewayError('INVALID_TOKEN', 'Unknown gateway token');
  return { tenant, record };
}

async function browserToken(
  c: Context<HonoEnv>,
  store: TenantStore,
  token: string,
): Promise<{ tenant: Tenant; record: TokenRecord }> {
  const verified = await verifyBrowserToken(
    await keyRing(c.var.settings.KEY_ENCRYPTION_KEY),
    token,
  );
  if (!verified.ok) {
    if (verified.reason === 'expired')
      throw new GatewayError('TOKEN_EXPIRED', 'Browser token has expired');
    throw new GatewayError('INVALID_TOKEN', 'Invalid browser token');
  }
  const claims = verified.claims;
  const origin = c.req.header('origin');
  if (origin !== claims.org) {
    throw new GatewayError(
      'ORIGIN_NOT_ALLOWED',
      origin
        ? 'This browser token is bound to another origin'
        : 'A browser token must come with its Origin header',
    );
  }
  // The minting token must still exist and be in date (revocation deletes it), even
  // where the TenantGuard is off or fails open; the guard makes revocation instant.
  const minter = await store.findTokenById(claims.ten, claims.tok);
  if (!minter)
    throw new GatewayError('TOKEN_REVOKED', 'The token that minted this browser token was revoked');
  if (minter.expires_at && Date.parse(minter.expires_at) <= Date.now())
    throw new GatewayError('TOKEN_EXPIRED');
  const tenant = await store.getTenant(claims.ten);
  if (!tenant) throw new GatewayError('INVALID_TOKEN', 'Invalid browser token');
  c.set('partition', claims.prt);
  // The minting token's id: the TenantGuard refuses this token once that one is revoked.
  const record: TokenRecord = {
    id: claims.tok,
    tenant_id: claims.ten,
    name: 'browser',
    prefix: BROWSER_TOKEN_PREFIX,
    last4: token.slice(-4),
    scopes: claims.scp,
    created_at: '',
    expires_at: new Date(claims.exp * 1000).toISOString(),
  };
  return { tenant, record };
}

/** A token without the scope a route needs gets a 403 that names the scope. */
export function requireScope(spec: Pick<RouteSpec, 'group' | 'method'>) {
  const needed = requiredScope(spec);
  return createMiddleware<HonoEnv>(async function requireScope(c, next) {
    if (!hasScope(c.var.token.scopes, needed)) {
      throw new GatewayError('SCOPE_REQUIRED', `This token lacks the scope ${needed}`, {
        scope: needed,
      });
    }
    await next();
  });
}

/** The subprotocol a browser WebSocket client names to say "the token follows". */
export const WS_PROTOCOL = 'apgw';

function presentedToken(c: Context<HonoEnv>, websocket: boolean): string | null {
  const authorization = c.req.header('authorization')?.trim();
  if (authorization) {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization);
    return match ? match[1]! : authorization;
  }
  const apiKey = c.req.header('x-api-key')?.trim();
  if (apiKey) return apiKey;
  if (!websocket) return null;
  const offered = (c.req.header('sec-websocket-protocol') ?? '').split(',').map((p) => p.trim());
  const fromProtocol = offered.find(
    (p) => p.startsWith(BROWSER_TOKEN_PREFIX) || p.startsWith('apgw_'),
  );
  // URLs end up in logs and histories: only short-lived browser tokens may ride there.
  const fromQuery = c.req.query('access_token');
  return fromProtocol ?? (fromQuery?.startsWith(BROWSER_TOKEN_PREFIX) ? fromQuery : null);
}
