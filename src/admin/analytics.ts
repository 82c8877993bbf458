/** Operator API: a tenant's usage history, as JSON series or a CSV export (analytics.contract.ts). */
import * as contract from './analytics.contract';
import { adminStores, existingTenant, guardFor } from './common';
import { type AdminApp, handle } from './handle';
import { historyCsv, historyQuery } from './history-query';

export function analyticsRoutes(app: AdminApp): void {
  handle(app, contract.getAnalytics, async (c) => {
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
    return {
      tenant_id: id,
      from: new Date(query.from).toISOString(),
      to: new Date(query.to).toISOString(),
      granularity: query.granularity,
      group_by: query.groupBy,
      ...history,
    };
  });
}
