/** The operator API's plans: named limits that tenants are on (docs/LIMITS.md, "Plans"). */
import * as z from 'zod';
import { limitsSchema } from '../metering/policy';
import { PLAN_NAME } from '../objects/tenant/plan-protocol';
import type { Plan } from '../types/wire';
import { instant, int } from './fields';
import { adminOperation, answerOf } from './operation';

export const planName = (field: string) =>
  z
    .string()
    .regex(PLAN_NAME, `${field} must be 1 to 32 lower-case letters, digits, _ or -, from a letter`);
export const planParams = z.object({ name: planName('name') });

const plan = () =>
  answerOf<Plan>()(
    z.object({
      name: z.string(),
      limits: limitsSchema,
      version: int(),
      updated_at: instant(),
      updated_by: z.string(),
      tenants: int(),
      pending: int(),
    }),
  );

export const listPlans = adminOperation({
  method: 'get',
  path: '/admin/plans',
  role: 'viewer',
  summary: 'The plans, with how many tenants each has',
  answer: () => z.object({ plans: z.array(plan()) }),
});

export const getPlan = adminOperation({
  method: 'get',
  path: '/admin/plans/:name',
  role: 'viewer',
  summary: 'One plan',
  params: planParams,
  answer: plan,
});

export const setPlan = adminOperation({
  method: 'put',
  path: '/admin/plans/:name',
  role: 'admin',
  audit: 'plan.set',
  summary: "Set a plan (the same body as a tenant's limits); every tenant on it takes it",
  description:
    'The plan book takes the change to every tenant on the plan on its own; this request ' +
    'helps for up to 20,000 tenants, so it usually answers with all of them reached. ' +
    '`pending` counts the tenants whose TenantGuard does not hold it yet (still to be ' +
    'reached, or not reachable: retried by the plan book); the change holds everywhere ' +
    'within LEASE_MAX_MS of `pending` reaching 0 (GET /admin/plans/{name}). A tenant joins ' +
    'with PATCH /admin/tenants/{id} `{"plan": "<name>"}`; its own limits, when set, still win.',
  params: planParams,
  body: limitsSchema,
  answer: plan,
});

export const removePlan = adminOperation({
  method: 'delete',
  path: '/admin/plans/:name',
  role: 'admin',
  audit: 'plan.removed',
  summary: 'Remove a plan no tenant is on (409 otherwise)',
  params: planParams,
  answer: () => z.object({ name: z.string(), removed: z.literal(true) }),
});
