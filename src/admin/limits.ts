/** Operator API: a tenant's limits, usage and cache (their definitions: limits.contract.ts). */
import { isolateAdmission } from '../limits/admission';
import type { TenantUsage } from '../types/wire';
import { adminStores, audit, changeGuard, existingTenant, guardFor, noSuchTenant } from './common';
import { type AdminApp, handle } from './handle';
import * as contract from './limits.contract';

export function limitRoutes(app: AdminApp): void {
  handle(app, contract.setLimits, async (c, op) => {
    const { id } = c.req.valid('param');
    await existingTenant(await adminStores(c), id);
    const limits = c.req.valid('json');
    const defaults = c.get('settings').DEFAULT_LIMITS;
    await changeGuard(c, id, (g) => g.limits().setLimits(limits, defaults));
    await audit(c, op.audit, { tenant_id: id, detail: { limits } });
    return { limits };
  });

  handle(app, contract.resetLimits, async (c, op) => {
    const { id } = c.req.valid('param');
    await existingTenant(await adminStores(c), id);
    // Back to its plan's limits, or the defaults: the answer says which hold now.
    const defaults = c.get('settings').DEFAULT_LIMITS;
    const limits = await changeGuard(c, id, (g) => g.limits().setLimits(null, defaults));
    await audit(c, op.audit, { tenant_id: id });
    return { limits };
  });

  // With token_id, that token's own meters too (docs/LIMITS.md, "Per-token limits").
  handle(app, contract.getUsage, async (c) => {
    const { id } = c.req.valid('param');
    const { token_id } = c.req.valid('query');
    await existingTenant(await adminStores(c), id);
    const defaults = c.get('settings').DEFAULT_LIMITS;
    const usage: TenantUsage = await guardFor(c.env, id)
      .limits()
      .usage(Date.now(), defaults, token_id);
    return usage;
  });

  // A new cache version for every tenant that shares this platform key: each of
  // their entries is orphaned at once (the Cache API lets them expire). The
  // tenant's TenantGuard takes the key from the record in its turn.
  handle(app, contract.purgeCache, async (c, op) => {
    const { id } = c.req.valid('param');
    await existingTenant(await adminStores(c), id);
    const purged = await guardFor(c.env, id).tenantRecord().purgeCache(id);
    if (!purged) throw noSuchTenant();
    for (const t of purged) isolateAdmission.forget(t);
    await audit(c, op.audit, { tenant_id: id, detail: { tenants: purged.length } });
    return { tenants: purged.length };
  });
}
