/** The operator API: tenants, their tokens, limits and usage. */
import { Hono } from 'hono';
import { z } from 'zod';
import type { HonoEnv } from '../env';
import { GatewayError } from '../errors';
import { limitsSchema } from '../limits/policy';
import { requireJson, validated } from '../middleware/validate';
import { textField } from '../routes/schemas';
import { TenantStore } from '../tenants/store';
import { randomBase62 } from '../tenants/token';
import { publicTenant } from '../tenants/types';
import { adminAuth } from './auth';
import { tenantGuard } from './guard';

const createTenantBody = z.strictObject({
  name: textField('name', 100, 1),
  platform_key: textField('platform_key', 512, 8),
});
const issueTokenBody = z.strictObject({ name: textField('name', 64, 1) });

const tenantId = z.string().regex(/^ten_[0-9A-Za-z]{16}$/, 'id must be a tenant id (ten_...)');
const tenantParams = z.object({ id: tenantId });
const tokenParams = z.object({ id: tenantId, token_id: z.string().regex(/^tok_[0-9A-Za-z]{16}$/, 'token_id must be a token id (tok_...)') });

const ok = (data: unknown) => ({ code: 0, msg: 'Success', data });

export function adminRoutes(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();
  app.use('*', adminAuth());
  const store = (env: HonoEnv['Bindings']) => new TenantStore(env.TENANTS, 0);

  async function existingTenant(env: HonoEnv['Bindings'], id: string) {
    const tenant = await store(env).getTenant(id);
    if (!tenant) throw new GatewayError('RESOURCE_NOT_FOUND', 'No such tenant');
    return tenant;
  }

  app.post('/tenants', requireJson(), validated('json', createTenantBody), async (c) => {
    const { name, platform_key } = c.req.valid('json');
    const { tenant, issued } = await store(c.env).createTenant(name, platform_key);
    audit(c.var.requestId, 'tenant.created', { tenant_id: tenant.id, token_id: issued.record.id });
    // The only responses that ever carry a token are the ones that create it.
    return c.json(ok({ tenant_id: tenant.id, token_id: issued.record.id, token: issued.token }), 201);
  });

  app.get('/tenants/:id', validated('param', tenantParams), async (c) => {
    return c.json(ok(publicTenant(await existingTenant(c.env, c.req.valid('param').id))));
  });

  app.post('/tenants/:id/tokens', validated('param', tenantParams), requireJson(), validated('json', issueTokenBody), async (c) => {
    const { id } = c.req.valid('param');
    await existingTenant(c.env, id);
    const issued = await store(c.env).issueToken(id, c.req.valid('json').name);
    audit(c.var.requestId, 'token.issued', { tenant_id: id, token_id: issued.record.id });
    return c.json(ok({ ...issued.record, token: issued.token }), 201);
  });

  app.get('/tenants/:id/tokens', validated('param', tenantParams), async (c) => {
    const { id } = c.req.valid('param');
    await existingTenant(c.env, id);
    return c.json(ok({ tokens: await store(c.env).listTokens(id) }));
  });

  // Revocation goes to the TenantGuard first: it refuses the token on the very
  // next request on every isolate, long before KV's deletion propagates.
  app.delete('/tenants/:id/tokens/:token_id', validated('param', tokenParams), async (c) => {
    const { id, token_id } = c.req.valid('param');
    await existingTenant(c.env, id);
    if (!(await store(c.env).tokenHash(id, token_id))) throw new GatewayError('RESOURCE_NOT_FOUND', 'No such token');
    await tenantGuard(c.env, id).revoke(token_id, Date.now());
    await store(c.env).deleteToken(id, token_id);
    audit(c.var.requestId, 'token.revoked', { tenant_id: id, token_id });
    return c.json(ok({ token_id, revoked: true }));
  });

  app.put('/tenants/:id/limits', validated('param', tenantParams), requireJson(), validated('json', limitsSchema), async (c) => {
    const { id } = c.req.valid('param');
    await existingTenant(c.env, id);
    const limits = c.req.valid('json');
    await tenantGuard(c.env, id).setLimits(limits);
    audit(c.var.requestId, 'limits.set', { tenant_id: id });
    return c.json(ok({ limits }));
  });

  app.delete('/tenants/:id/limits', validated('param', tenantParams), async (c) => {
    const { id } = c.req.valid('param');
    await existingTenant(c.env, id);
    await tenantGuard(c.env, id).setLimits(null);
    audit(c.var.requestId, 'limits.reset', { tenant_id: id });
    return c.json(ok({ limits: c.var.settings.DEFAULT_LIMITS }));
  });

  app.get('/tenants/:id/usage', validated('param', tenantParams), async (c) => {
    const { id } = c.req.valid('param');
    await existingTenant(c.env, id);
    return c.json(ok(await tenantGuard(c.env, id).usage(Date.now(), c.var.settings.DEFAULT_LIMITS)));
  });

  // A new cache version for every tenant that shares this platform key: each of
  // their entries is orphaned at once (the Cache API lets them expire).
  app.post('/tenants/:id/cache/purge', validated('param', tenantParams), async (c) => {
    const { id } = c.req.valid('param');
    const tenant = await existingTenant(c.env, id);
    const sharing = new Set([id, ...(await store(c.env).tenantsSharingKey(tenant.key_fingerprint))]);
    const version = `${Date.now().toString(36)}.${randomBase62(8)}`;
    await Promise.all([...sharing].map((t) => tenantGuard(c.env, t).setCacheVersion(version)));
    audit(c.var.requestId, 'cache.purged', { tenant_id: id, tenants: sharing.size });
    return c.json(ok({ tenants: sharing.size }));
  });

  return app;
}

function audit(requestId: string, event: string, fields: Record<string, unknown>) {
  console.log(JSON.stringify({ level: 'info', event, request_id: requestId, ...fields }));
}
