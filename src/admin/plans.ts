/**
 * Operator API: plans, named limits that tenants are on (docs/LIMITS.md, "Plans").
 * `PUT /admin/plans/{name}` takes the same body as a tenant's limits and answers once
 * every tenant's TenantGuard on the plan has taken it (or could not be reached: those
 * are retried by the PlanBook, and `pending` counts them); a tenant joins with
 * `PATCH /admin/tenants/{id}` `{"plan": "<name>"}`.
 */
import { type Context, Hono } from 'hono';
import * as z from 'zod';
import { GatewayError, invalidField } from '../errors';
import { planBook, type Rollout } from '../guard/plan-book';
import { PLAN_NAME } from '../guard/plan-protocol';
import { isolateAdmission } from '../limits/admission';
import { limitsSchema } from '../metering/policy';
import { validated } from '../middleware/validate';
import type { HonoEnv } from '../types/context';
import type { Plan } from '../types/wire';
import { audit, auditContext, ok } from './common';

export const planName = (field: string) =>
  z
    .string()
    .regex(PLAN_NAME, `${field} must be 1 to 32 lower-case letters, digits, _ or -, from a letter`);
export const planParams = z.object({ name: planName('name') });

/** Most rollout calls one change makes before it answers (the PlanBook's alarm goes on). */
const MAX_ROUNDS = 20;

/** This isolate drops its leases of the tenants a rollout reached: their next request asks. */
function forgetLeases(rollout: Rollout): void {
  for (const tenantId of rollout.applied) isolateAdmission.forget(tenantId);
}

/** Puts a tenant on a plan (or off it, `null`); a 400 naming `field` when there is no such plan. */
export async function joinPlan(
  c: Context<HonoEnv>,
  tenantId: string,
  plan: string | null,
  field = 'plan',
): Promise<void> {
  const outcome = await planBook(c.env).join(tenantId, plan);
  if (outcome.kind === 'no_such_plan') throw noSuchPlan(plan ?? '', field);
  isolateAdmission.forget(tenantId);
}

export const noSuchPlan = (plan: string, field = 'plan') =>
  invalidField('body', field, `${field}: there is no plan named ${plan} (GET /admin/plans)`);

export function planRoutes(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();

  app.get('/', async (c) => c.json(ok<{ plans: Plan[] }>({ plans: await planBook(c.env).list() })));

  app.get('/:name', validated('param', planParams), async (c) => {
    const plan = await planBook(c.env).get(c.req.valid('param').name);
    if (!plan) throw new GatewayError('RESOURCE_NOT_FOUND', { message: 'No such plan' });
    return c.json(ok<Plan>(plan));
  });

  // Every tenant on the plan takes it before the answer (at 1,000 guards a call, then
  // again); a guard that cannot be reached now is retried by the PlanBook's alarm.
  app.put('/:name', validated('param', planParams), validated('json', limitsSchema), async (c) => {
    const { name } = c.req.valid('param');
    const limits = c.req.valid('json');
    const book = planBook(c.env);
    const { actor } = auditContext(c);
    const first = await book.put(name, limits, actor, Date.now());
    forgetLeases(first.rollout);
    let rollout = first.rollout;
    let reached = rollout.applied.length;
    for (let round = 1; rollout.due > 0 && round < MAX_ROUNDS; round++) {
      rollout = await book.rollout();
      forgetLeases(rollout);
      reached += rollout.applied.length;
    }
    const plan = (await book.get(name)) ?? first.plan;
    await audit(c, 'plan.set', {
      detail: { name, version: plan.version, limits, tenants: plan.tenants, reached },
    });
    return c.json(ok<Plan>(plan));
  });

  app.delete('/:name', validated('param', planParams), async (c) => {
    const { name } = c.req.valid('param');
    const outcome = await planBook(c.env).remove(name);
    if (outcome.kind === 'not_found') {
      throw new GatewayError('RESOURCE_NOT_FOUND', { message: 'No such plan' });
    }
    if (outcome.kind === 'in_use') {
      throw new GatewayError('CONFLICT', {
        message: `Plan ${name} has ${outcome.tenants} tenant(s): move them to another plan first`,
        details: { tenants: outcome.tenants },
      });
    }
    await audit(c, 'plan.removed', { detail: { name } });
    return c.json(ok({ name, removed: true }));
  });

  return app;
}
