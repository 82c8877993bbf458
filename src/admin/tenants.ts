/** Operator API: tenants. No endpoint ever returns a platform key. */
import { type Context, Hono } from 'hono';
import * as z from 'zod';
import { GatewayError } from '../errors';
import { validated } from '../middleware/validate';
import { planBook } from '../objects/plans/plan-book';
import { catalogOf } from '../routes/catalog';
import { intFieldOr, nameField, originField, textField } from '../routes/schemas';
import type { Stores } from '../tenants/stores';
import { publicTenant, type TenantPatch } from '../tenants/tenant-store';
import type { HonoEnv } from '../types/context';
import type { StoredTenant } from '../types/tenants';
import type { CreatedTenant, PublicTenant, TenantPage } from '../types/wire';
import {
  adminStores,
  audit,
  changeGuard,
  existingTenant,
  guardFor,
  issueToken,
  noSuchTenant,
  ok,
  tenantParams,
  welcomeTenant,
} from './common';
import { joinPlan, noSuchPlan, planName } from './plans';
import { newToken, tokenSpecSchema } from './token-spec';

// Printable ASCII only: the key goes into an HTTP header, and workerd warns (quoting the value) on
// anything else.
export const platformKey = textField('platform_key', 512, 8).regex(
  /^[\x21-\x7E]+$/,
  'platform_key must be printable ASCII without spaces',
);
/** Most browser origins one tenant may allow (docs/BOUNDS.md). */
const MAX_CORS_ORIGINS = 20;
const corsOrigins = z.array(originField('each origin')).max(MAX_CORS_ORIGINS);
export const createBody = z.strictObject({
  name: nameField('name', 100),
  platform_key: platformKey,
  cors_origins: corsOrigins.default([]),
  token: tokenSpecSchema.default({ name: 'default', scopes: ['full'] }),
  /** A plan the tenant starts on (PUT /admin/plans/{name} makes one). */
  plan: planName('plan').optional(),
});
export const updateBody = z
  .strictObject({
    name: nameField('name', 100).optional(),
    platform_key: platformKey.optional(),
    cors_origins: corsOrigins.optional(),
    /** Joins a plan; null leaves it (the tenant's own limits, if any, still win). */
    plan: planName('plan').nullable().optional(),
  })
  .refine(
    (b) => Object.keys(b).length > 0,
    'give at least one of name, platform_key, cors_origins, plan (status: POST .../disable or ' +
      '.../enable)',
  );
export const listQuery = z.strictObject({
  page_size: intFieldOr('page_size', 1, 100, 20),
  cursor: z.string().max(1024).optional(),
  /** Name or id holds this (any case); docs/OPERATING.md, "Tenants". */
  q: z.string().trim().min(1, 'q must not be empty').max(100).optional(),
});

export function tenantRoutes(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();

  app.post('/', validated('json', createBody), async (c) => {
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
    const issued = await issueToken(c, stores, tenant.id, firstToken, limits);
    await audit(c, 'tenant.created', {
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
    return c.json(
      ok<CreatedTenant>({
        tenant_id: tenant.id,
        token_id: issued.record.id,
        token: issued.token,
        scopes: issued.record.scopes,
        expires_at: issued.record.expires_at,
        limits,
        plan,
      }),
      201,
    );
  });

  app.get('/', validated('query', listQuery), async (c) => {
    const { page_size, cursor, q } = c.req.valid('query');
    const { tenants } = await adminStores(c);
    const page = q
      ? await tenants.search(q, cursor, page_size)
      : await tenants.list(cursor, page_size);
    // One PlanBook call a page: it alone says which plan each is on.
    const plans = await planBook(c.env).plansOf(page.tenants.map((t) => t.id));
    const rows = page.tenants.map((t) => ({ ...t, plan: plans[t.id] ?? null }));
    return c.json(ok<TenantPage>({ tenants: rows, cursor: page.cursor }));
  });

  app.get('/:id', validated('param', tenantParams), async (c) => {
    const { id } = c.req.valid('param');
    const tenant = await existingTenant(await adminStores(c), id);
    return c.json(ok<PublicTenant>(publicTenant(tenant, await planBook(c.env).planOf(id))));
  });

  // Record changes are made by the tenant's TenantGuard, one at a time, each on the record
  // the one before left (docs/SECURITY.md, "Tenant record changes are made in one place").
  // The read here answers an unknown tenant before anything is joined or asked.
  app.patch('/:id', validated('param', tenantParams), validated('json', updateBody), async (c) => {
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
    await audit(c, 'tenant.updated', {
      tenant_id: id,
      detail: {
        fields: Object.keys(patch).sort(),
        ...(patch.plan !== undefined ? { plan: patch.plan } : {}),
      },
    });
    // A plan just joined is known: the PlanBook is asked only when the patch left it alone.
    const plan = joining !== undefined ? joining : await planBook(c.env).planOf(id);
    return c.json(ok<PublicTenant>(publicTenant(updated, plan)));
  });

  for (const [action, status] of [
    ['disable', 'disabled'],
    ['enable', 'active'],
  ] as const) {
    app.post(`/:id/${action}`, validated('param', tenantParams), async (c) => {
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
      await audit(c, `tenant.${action}d`, { tenant_id: id });
      return c.json(ok<PublicTenant>(publicTenant(updated, plan)));
    });
  }

  app.delete('/:id', validated('param', tenantParams), async (c) => {
    const { id } = c.req.valid('param');
    const stores = await adminStores(c);
    const tenant = await existingTenant(stores, id);
    // Refuse first (instant, everywhere), then remove the records; the plan is left once the
    // record is gone: a PATCH joining one before that is undone here, one after finds no
    // tenant and leaves it itself.
    await changeGuard(c, id, (g) => g.tenantRecord().setDisabled(true));
    stores.tokens.forget(await guardFor(c.env, id).tokens().removeAll(id));
    await changeGuard(c, id, (g) => g.tenantRecord().remove(id));
    stores.tenants.forget(tenant, null);
    await planBook(c.env).leave(id);
    await audit(c, 'tenant.deleted', { tenant_id: id });
    return c.json(ok({ tenant_id: id, deleted: true }));
  });

  return app;
}

/**
 * Has the tenant's TenantGuard make a change of its record (null when the tenant went
 * meanwhile: nothing written); this isolate's memos drop what changed.
 */
async function changeRecord(
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
