/**
 * Operator API: a tenant's recent requests (`GET /admin/tenants/{id}/requests`),
 * newest first, filtered by `request_id`, `token_id`, `status` and `operation`
 * (docs/OBSERVABILITY.md, "Recent requests"). One TenantGuard call.
 */
import { Hono } from 'hono';
import { validated } from '../middleware/validate';
import { recentPage, recentQuery, recentQuerySchema } from '../observability/recent-query';
import type { HonoEnv } from '../types/context';
import type { RecentRequestPage } from '../types/wire';
import { adminStores, existingTenant, guardFor, ok, tenantParams } from './common';

export function requestRoutes(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();
  app.get(
    '/:id/requests',
    validated('param', tenantParams),
    validated('query', recentQuerySchema),
    async (c) => {
      const { id } = c.req.valid('param');
      await existingTenant(await adminStores(c), id);
      const page = await guardFor(c.env, id)
        .recentRequests()
        .query(recentQuery(c.req.valid('query')));
      return c.json(ok<RecentRequestPage>(recentPage(page)));
    },
  );
  return app;
}
