/**
 * Operator API: a tenant's recent requests (`GET /admin/tenants/{id}/requests`),
 * newest first, filtered by `request_id`, `token_id`, `status` and `operation`
 * (docs/OBSERVABILITY.md, "Recent requests"). One TenantGuard call.
 */
import { recentPage } from '../observability/recent-page';
import { recentQuery } from '../observability/recent-query';
import { adminStores, existingTenant, guardFor } from './common';
import { type AdminApp, handle } from './handle';
import * as contract from './requests.contract';

export function requestRoutes(app: AdminApp): void {
  handle(app, contract.listRequests, async (c) => {
    const { id } = c.req.valid('param');
    await existingTenant(await adminStores(c), id);
    const page = await guardFor(c.env, id)
      .recentRequests()
      .query(recentQuery(c.req.valid('query')));
    return recentPage(page);
  });
}
