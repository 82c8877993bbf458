/** Operator API: a tenant's usage history, as JSON series or a CSV export. */
import { Hono } from 'hono';
import { validated } from '../middleware/validate';
import { historyCsv, historyQuery, historyQuerySchema } from '../observability/history-query';
import type { HonoEnv } from '../types/context';
import type { Analytics } from '../types/wire';
import { adminStores, existingTenant, guardFor, ok, tenantParams } from './common';

export function analyticsRoutes(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();

  app.get(
    '/:id/analytics',
    validated('param', tenantParams),
    validated('query', historyQuerySchema),
    async (c) => {
      const { id } = c.req.valid('param');
      const query = historyQuery(c.req.valid('query'), c.get('settings').USAGE_RETENTION_DAYS);
      await existingTenant(await adminStores(c), id);
      const history = await guardFor(c.env, id).history().query(query);
      if (/\btext\/csv\b/i.test(c.req.header('accept') ?? '')) {
        return c.body(historyCsv(history, query.groupBy), 200, {
          'content-type': 'text/csv; charset=utf-8',
          'content-disposition': `attachment; filename="${id}-usage.csv"`,
        });
      }
      return c.json(
        ok<Analytics>({
          tenant_id: id,
          from: new Date(query.from).toISOString(),
          to: new Date(query.to).toISOString(),
          granularity: query.granularity,
          group_by: query.groupBy,
          ...history,
        }),
      );
    },
  );

  return app;
}
