/**
 * Tenant authentication. The caller's gateway token may arrive as
 * `Authorization: Bearer <token>`, as a bare `Authorization: <token>` (what
 * the platform's own clients send), or as `x-api-key: <token>`.
 *
 * @example app.use('/team/*', tenantAuth())
 */
import { createMiddleware } from 'hono/factory';
import type { HonoEnv } from '../env';
import type { RouteSpec } from '../routes/types';
import { GatewayError } from '../errors';
import { keyRing } from '../tenants/crypto';
import { hasScope, requiredScope } from '../tenants/scopes';
import { TenantStore } from '../tenants/store';
import { hashToken, isWellFormedToken } from '../tenants/token';

export function tenantAuth() {
  return createMiddleware<HonoEnv>(async function tenantAuth(c, next) {
    const token = presentedToken(c.req.raw.headers);
    if (!token) throw new GatewayError('MISSING_TOKEN', 'Missing gateway token: send Authorization: Bearer <token>');
    // Shape and checksum first: garbage never costs a KV read.
    if (!isWellFormedToken(token)) throw new GatewayError('INVALID_TOKEN', 'Malformed gateway token');

    const settings = c.var.settings;
    const store = new TenantStore(c.env.TENANTS, await keyRing(settings.KEY_ENCRYPTION_KEY), settings.TENANT_MEMO_TTL_MS);
    const record = await store.findToken(await hashToken(token));
    if (!record) throw new GatewayError('INVALID_TOKEN', 'Unknown gateway token');
    if (record.expires_at && Date.parse(record.expires_at) <= Date.now()) throw new GatewayError('TOKEN_EXPIRED');
    const tenant = await store.getTenant(record.tenant_id);
    if (!tenant) throw new GatewayError('INVALID_TOKEN', 'Unknown gateway token');
    if (tenant.status !== 'active') throw new GatewayError('TENANT_DISABLED');

    c.set('tenant', tenant);
    c.set('token', record);
    await next();
  });
}

/** A token without the scope a route needs gets a 403 that names the scope. */
export function requireScope(spec: RouteSpec) {
  const needed = requiredScope(spec);
  return createMiddleware<HonoEnv>(async function requireScope(c, next) {
    if (!hasScope(c.var.token.scopes, needed)) {
      throw new GatewayError('SCOPE_REQUIRED', `This token lacks the scope ${needed}`, { scope: needed });
    }
    await next();
  });
}

function presentedToken(headers: Headers): string | null {
  const authorization = headers.get('authorization')?.trim();
  if (authorization) {
    const match = /^Bearer\s+(\S+)$/i.exec(authorization);
    return match ? match[1]! : authorization;
  }
  return headers.get('x-api-key')?.trim() || null;
}
