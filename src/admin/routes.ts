/** The operator API: tenants and their tokens. */
import { Hono } from 'hono';
import { z } from 'zod';
import type { HonoEnv } from '../env';
import { GatewayError } from '../errors';
import { requireJson, validated } from '../middleware/validate';
import { textField } from '../routes/schemas';
import { TenantStore } from '../tenants/store';
import { publicTenant } from '../tenants/types';
import { adminAuth } from './auth';

const createTenantBody = z.strictObject({
  name: textField('name', 100, 1),
  platform_key: textField('platform_key', 512, 8),
});

const tenantParams = z.object({ id: z.string().regex(/^ten_[0-9A-Za-z]{16}$/, 'id must be a tenant id (ten_...)') });

export function adminRoutes(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();
  app.use('*', adminAuth());
  const store = (env: HonoEnv['Bindings']) => new TenantStore(env.TENANTS, 0);

  app.post('/tenants', requireJson(), validated('json', createTenantBody), async (c) => {
    const { name, platform_key } = c.req.valid('json');
    const { tenant, issued } = await store(c.env).createTenant(name, platform_key);
    log('tenant.created', { tenant_id: tenant.id, token_id: issued.record.id, request_id: c.var.requestId });
    // The only response that ever carries the token.
    return c.json({ code: 0, msg: 'Success', data: { tenant_id: tenant.id, token_id: issued.record.id, token: issued.token } }, 201);
  });

  app.get('/tenants/:id', validated('param', tenantParams), async (c) => {
    const tenant = await store(c.env).getTenant(c.req.valid('param').id);
    if (!tenant) throw new GatewayError('RESOURCE_NOT_FOUND', 'No such tenant');
    return c.json({ code: 0, msg: 'Success', data: publicTenant(tenant) });
  });

  return app;
}

function log(event: string, fields: Record<string, unknown>) {
  console.log(JSON.stringify({ level: 'info', event, ...fields }));
}
