/** Operator API: a tenant's limits, usage and cache. */
import { Hono } from 'hono';
import * as z from 'zod';
import { isolateAdmission } from '../limits/admission';
import { limitsSchema } from '../metering/policy';
import { validated } from '../middleware/validate';
import type { HonoEnv } from '../types/context';
import type { TenantUsage } from '../types/wire';
import {
  adminStores,
  audit,
  changeGuard,
  existingTenant,
  guardFor,
  noSuchTenant,
  ok,
  tenantParams,
  tokenIdField,
} from './common';

export const usageQuery = z.strictObject({ token_id: tokenIdField.optional() });

export function limitRoutes(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();

  app.put(
    '/:id/limits',
    validated('param', tenantParams),
    validated('json', limitsSchema),
    async (c) => {
      const { id } = c.req.valid('param');
      await existingTenant(await adminStores(c), id);
      const limits = c.req.valid('json');
      const defaults = c.get('settings').DEFAULT_LIMITS;
      await changeGuard(c, id, (g) => g.limits().setLimits(limits, defaults));
      await audit(c, 'limits.set', { tenant_id: id, detail: { limits } });
      return c.json(ok({ limits }));
    },
  );

  app.delete('/:id/limits', validated('param', tenantParams), async (c) => {
    const { id } = c.req.valid('param');
    await existingTenant(await adminStores(c), id);
    // Back to its plan's limits, or the defaults: the answer says which hold now.
    const defaults = c.get('settings').DEFAULT_LIMITS;
    const limits = await changeGuard(c, id, (g) => g.limits().setLimits(null, defaults));
    await audit(c, 'limits.reset', { tenant_id: id });
    return c.json(ok({ limits }));
  });

  // With token_id, that token's own meters too (docs/LIMITS.md, "Per-token limits").
  app.get(
    '/:id/usage',
    validated('param', tenantParams),
    validated('query', usageQuery),
    async (c) => {
      const { id } = c.req.valid('param');
      const { token_id } = c.req.valid('query');
      await existingTenant(await adminStores(c), id);
      const defaults = c.get('settings').DEFAULT_LIMITS;
      const usage: TenantUsage = await guardFor(c.env, id)
        .limits()
        .usage(Date.now(), defaults, token_id);
      return c.json(ok(usage));
    },
  );

  // A new cache version for every tenant that shares this platform key: each of
  // their entries is orphaned at once (the Cache API lets them expire). The
  // tenant's TenantGuard takes the key from the record in its turn.
  app.post('/:id/cache/purge', validated('param', tenantParams), async (c) => {
    const { id } = c.req.valid('param');
    await existingTenant(await adminStores(c), id);
    const purged = await guardFor(c.env, id).tenantRecord().purgeCache(id);
    if (!purged) throw noSuchTenant();
    for (const t of purged) isolateAdmission.forget(t);
    await audit(c, 'cache.purged', { tenant_id: id, detail: { tenants: purged.length } });
    return c.json(ok({ tenants: purged.length }));
  });

  return app;
}
