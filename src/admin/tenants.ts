/** Operator API: tenants (their definitions: tenants.contract.ts). Never a platform key. */
import type { Context } from 'hono';
import { GatewayError } from '../errors';
import { planBook } from '../objects/plans/plan-book';
import { catalogOf } from '../operations/catalog';
import type { Stores } from '../tenants/stores';
import { publicTenant, type TenantPatch } from '../tenants/tenant-store';
import type { HonoEnv } from '../types/context';
import type { StoredTenant } from '../types/tenants';
import {
  adminStores,
  audit,
  changeGuard,
  existingTenant,
  guardFor,
  mintToken,
  noSuchTenant,
  welcomeTenant,
} from './common';
import { type AdminApp, handle } from './handle';
import { joinPlan, noSuchPlan } from './plans';
import * as contract from './tenants.contract';
import { newToken } from './token-spec';

export function tenantRoutes(app: AdminApp): void {
  handle(app, contract.createTenant, async (c, op) => {
    const body = c.req.valid('json');
    const firstToken = newToken(body.token, catalogOf(c.get('settings')).groups);
    if (body.plan && !(await planBook(c.env).get(body.plan))) throw noSuchPlan(body.plan);
    const stores = await adminStores(c);
    const twin = await stores.tenants.twinOf(body.name, body.platform_key);
    if (twin) {
      throw new GatewayError('CONFLICT', {
        message: `A tenant named ${body.name.trim()} with this platform key exists already: ${twin}`,
        details: { tenant_id: twin },
      });
    }
    const tenant = await stores.tenants.create({
      name: body.name,
      platformKey: body.platform_key,
      corsOrigins: body.cors_origins,
    });
    // Removed since the check above: the tenant is made without a plan, and says so.
    const joined = body.plan ? await planBook(c.env).join(tenant.id, body.plan) : null;
    const plan = joined?.kind === 'joined' ? joined.plan : null;
    await welcomeTenant(c, stores, tenant);
    const limits = body.token.limits ?? null;
    const issued = await mintToken(c, stores, tenant.id, firstToken, limits);
    await audit(c, op.audit, {
      tenant_id: tenant.id,
      token_id: issued.record.id,
      detail: {
        name: tenant.name,
        scopes: issued.record.scopes,
        limits,
        plan,
      },
    });
    // The token appears only here, once.
    return {
      tenant_id: tenant.id,
      token_id: issued.record.id,
      token: issued.token,
      scopes: issued.record.scopes,
      expires_at: issued.record.expires_at,
      limits,
      plan,
    };
  });

  handle(app, contract.listTenants, async (c) => {
    const { page_size, cursor, q } = c.req.valid('query');
    const { tenants } = await adminStores(c);
    const page = q
      ? await tenants.search(q, cursor, page_size)
      : await tenants.list(cursor, page_size);
    // One PlanBook call a page: it alone says which plan each is on.
    const plans = await planBook(c.env).plansOf(page.tenants.map((t) => t.id));
    const rows = page.tenants.map((t) => ({ ...t, plan: plans[t.id] ?? null }));
    return { tenants: rows, cursor: page.cursor };
  });

  handle(app, contract.getTenant, async (c) => {
    const { id } = c.req.valid('param');
    const tenant = await existingTenant(await adminStores(c), id);
    return publicTenant(tenant, await planBook(c.env).planOf(id));
  });

  // Record changes are made by the tenant's TenantGuard, one at a time, each on the record
  // the one before left (docs/SECURITY.md, "Tenant record changes are made in one place").
  // The read here answers an unknown tenant before anything is joined or asked.
  handle(app, contract.updateTenant, async (c, op) => {
    const { id } = c.req.valid('param');
    const patch = c.req.valid('json');
    const stores = await adminStores(c);
    await existingTenant(stores, id);
    // The PlanBook alone keeps the plan (and refuses an unknown one); KV keeps the rest.
    const { plan: joining, ...fields } = patch;
    if (joining !== undefined) await joinPlan(c, id, joining);
    const updated = await changeRecord(c, stores, id, fields);
    if (!updated) {
      // Deleted since the read above: the plan just joined is left again, or the PlanBook
      // would keep a member no deletion ever takes off.
      if (joining) await planBook(c.env).leave(id);
      throw noSuchTenant();
    }
    await audit(c, op.audit, {
      tenant_id: id,
      detail: {
        fields: Object.keys(patch).sort(),
        ...(patch.plan !== undefined ? { plan: patch.plan } : {}),
      },
    });
    // A plan just joined is known: the PlanBook is asked only when the patch left it alone.
    const plan = joining !== undefined ? joining : await planBook(c.env).planOf(id);
    return publicTenant(updated, plan);
  });

  for (const [operation, status] of [
    [contract.disableTenant, 'disabled'],
    [contract.enableTenant, 'active'],
  ] as const) {
    handle(app, operation, async (c, op) => {
      const { id } = c.req.valid('param');
      const stores = await adminStores(c);
      await existingTenant(stores, id);
      // The TenantGuard sets its flag with the record: the change holds on the next request
      // everywhere, and the record says what the guard does.
      const [updated, plan] = await Promise.all([
        changeRecord(c, stores, id, { status }),
        planBook(c.env).planOf(id),
      ]);
      if (!updated) throw noSuchTenant();
      await audit(c, op.audit, { tenant_id: id });
      return publicTenant(updated, plan);
    });
  }

  handle(app, contract.deleteTenant, async (c, op) => {
    const { id } = c.req.valid('param');
    const stores = await adminStores(c);
    await removeTenant(c, stores, await existingTenant(stores, id));
    await audit(c, op.audit, { tenant_id: id });
    return { tenant_id: id, deleted: true as const };
  });
}

/**
 * Deletes a tenant: refused first (instant, everywhere), then its records removed; the plan
 * is left once the record is gone: a PATCH joining one before that is undone here, one
 * after finds no tenant and leaves it itself.
 */
export async function removeTenant(
  c: Context<HonoEnv>,
  stores: Stores,
  tenant: StoredTenant,
): Promise<void> {
  const id = tenant.id;
  await changeGuard(c, id, (g) => g.tenantRecord().setDisabled(true));
  stores.tokens.forget(await guardFor(c.env, id).tokens().removeAll(id));
  await changeGuard(c, id, (g) => g.tenantRecord().remove(id));
  stores.tenants.forget(tenant, null);
  await planBook(c.env).leave(id);
}

/**
 * Has the tenant's TenantGuard make a change of its record (null when the tenant went
 * meanwhile: nothing written); this isolate's memos drop what changed.
 */
export async function changeRecord(
  c: Context<HonoEnv>,
  stores: Stores,
  id: string,
  patch: TenantPatch,
): Promise<StoredTenant | null> {
  const change = await changeGuard(c, id, (g) => g.tenantRecord().update(id, patch));
  if (!change) return null;
  stores.tenants.forget(change.before, change.after);
  return change.after;
}
