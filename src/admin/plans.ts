/**
 * Operator API: plans, named limits that tenants are on (docs/LIMITS.md, "Plans"; their
 * definitions: plans.contract.ts).
 * `PUT /admin/plans/{name}` takes the same body as a tenant's limits; the PlanBook takes
 * it to every tenant's TenantGuard on the plan on its own (its alarm), and this request
 * helps it for up to MAX_ROUNDS waves, so a plan of up to 20,000 tenants usually answers
 * with all of them reached; `pending` counts those not reached yet. A tenant joins with
 * `PATCH /admin/tenants/{id}` `{"plan": "<name>"}`.
 */
import type { Context } from 'hono';
import { GatewayError, invalidField } from '../errors';
import { isolateAdmission } from '../limits/admission';
import { planBook, type Rollout } from '../objects/plans/plan-book';
import type { HonoEnv } from '../types/context';
import { audit, auditContext } from './common';
import { type AdminApp, handle } from './handle';
import * as contract from './plans.contract';

/** Most rollout calls one change makes before it answers (the PlanBook's alarm does the rest). */
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

export function planRoutes(app: AdminApp): void {
  handle(app, contract.listPlans, async (c) => ({ plans: await planBook(c.env).list() }));

  handle(app, contract.getPlan, async (c) => {
    const plan = await planBook(c.env).get(c.req.valid('param').name);
    if (!plan) throw new GatewayError('RESOURCE_NOT_FOUND', { message: 'No such plan' });
    return plan;
  });

  // The PlanBook finishes the rollout on its own (its alarm); calling it here, 1,000 guards
  // a call, only makes it sooner, so the answer usually finds every tenant reached. A
  // request cut short (the operator gone) leaves nothing behind.
  handle(app, contract.setPlan, async (c, op) => {
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
    await audit(c, op.audit, {
      detail: { name, version: plan.version, limits, tenants: plan.tenants, reached },
    });
    return plan;
  });

  handle(app, contract.removePlan, async (c, op) => {
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
    await audit(c, op.audit, { detail: { name } });
    return { name, removed: true as const };
  });
}
