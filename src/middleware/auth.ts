/**
 * Tenant authentication. The caller's gateway token may arrive as
 * `Authorization: Bearer <token>`, as a bare `Authorization: <token>` (what
 * the platform's own clients send), or as `x-api-key: <token>`.
 *
 * @example app.use('/team/*', tenantAuth())
 */
import { createMiddleware } from 'hono/factory';
import type { HonoEnv } from '../env';
import { GatewayError } from '../errors';
import { TenantStore } from '../tenants/store';
import { hashToken, isWellFormedToken } from '../tenants/token';

export function tenantAuth() {
  return createMiddleware<HonoEnv>(async function tenantAuth(c, next) {
    const token = presentedToken(c.req.raw.headers);
    if (!token) throw new GatewayError('MISSING_TOKEN', 'Missing gateway token: send Authorization: Bearer <token>');
    // Shape and checksum first: garbage never costs a KV read.
    if (!isWellFormedToken(token)) throw new GatewayError('INVALID_TOKEN', 'Malformed gateway token');

    const store = new TenantStore(c.env.TENANTS, c.var.settings.TENANT_MEMO_TTL_MS);
    const record = await store.findToken(await hashToken(token));
    if (!record) throw new GatewayError('INVALID_TOKEN', 'Unknown gateway token');
    const tenant = await store.getTenant(record.tenant_id);
    if (!tenant) throw new GatewayError('INVALID_TOKEN', 'Unknown gateway token');
    if (tenant.status !== 'active') throw new GatewayError('TENANT_DISABLED');

    c.set('tenant', tenant);
    c.set('token', record);
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
