/** The operator API's limits of a tenant, its usage now, and its read cache. */
import * as z from 'zod';
import { limitsSchema, tokenLimitsSchema } from '../metering/policy';
import type { TenantUsage } from '../types/wire';
import { int, tenantParams, tokenIdField } from './fields';
import { adminOperation, answerOf } from './operation';

export const usageQuery = z.strictObject({ token_id: tokenIdField.optional() });

const meter = () =>
  z.object({
    name: z.string(),
    kind: z.enum(['rate', 'quota']),
    limit: int(),
    window_s: int(),
    /** Units admitted requests spent. */
    used: int(),
    /** Units leased to isolates and brokers, not yet spent or given back. */
    reserved: int().optional(),
    remaining: int(),
    /** Seconds until the current count has drained. */
    reset_s: z.number(),
  });

export const setLimits = adminOperation({
  method: 'put',
  path: '/admin/tenants/:id/limits',
  role: 'admin',
  audit: 'limits.set',
  summary: "Replace a tenant's limits",
  description:
    '`limiter: "leased"` (the default): isolates admit from leases the TenantGuard grants ' +
    'and renews in the background; never more than a limit passes, and refusals, ' +
    'revocations and purges reach every isolate within LEASE_MAX_MS (1 s). ' +
    '`limiter: "exact"`: one TenantGuard call per request; a limit refuses the very next ' +
    'request. Policies count in a sliding window unless `algorithm: "fixed"`.',
  params: tenantParams,
  body: limitsSchema,
  answer: () => z.object({ limits: limitsSchema }),
});

export const resetLimits = adminOperation({
  method: 'delete',
  path: '/admin/tenants/:id/limits',
  role: 'admin',
  audit: 'limits.reset',
  summary: "Remove a tenant's own limits: its plan's hold again, or the defaults",
  params: tenantParams,
  answer: () => z.object({ limits: limitsSchema }),
});

export const getUsage = adminOperation({
  method: 'get',
  path: '/admin/tenants/:id/usage',
  role: 'viewer',
  summary: "Current windows, what remains, TenantGuard calls (with token_id, that token's own too)",
  params: tenantParams,
  query: usageQuery,
  answer: () =>
    answerOf<TenantUsage>()(
      z.object({
        limits: limitsSchema,
        custom: z.boolean(),
        plan: z.string().nullable(),
        meters: z.array(meter()),
        guard_calls: z.object({
          acquires: int(),
          renewals: int(),
          exact_admits: int(),
          broker_acquires: int(),
          broker_renewals: int(),
        }),
        token_limits: tokenLimitsSchema.nullable().optional(),
      }),
    ),
});

export const purgeCache = adminOperation({
  method: 'post',
  path: '/admin/tenants/:id/cache/purge',
  role: 'admin',
  audit: 'cache.purged',
  summary: 'Purge the read cache of every tenant sharing the platform key',
  params: tenantParams,
  answer: () => z.object({ tenants: int() }),
});
