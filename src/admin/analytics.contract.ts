/** The operator API's usage history of a tenant, as JSON series or a CSV export. */
import * as z from 'zod';
import type { Analytics } from '../types/wire';
import { instant, int, tenantParams } from './fields';
import { adminOperation, answerOf } from './operation';

const moment = (name: string) =>
  z
    .string()
    .max(40)
    .refine((s) => !Number.isNaN(Date.parse(s)), `${name} must be an ISO 8601 date or date-time`)
    .optional();

export const historyQuerySchema = z.strictObject({
  from: moment('from'),
  to: moment('to'),
  granularity: z.enum(['hour', 'day'], { error: 'granularity must be hour or day' }).default('day'),
  group_by: z.string().max(40).optional(),
});

/** Upper bound of a latency bucket (ms); null above 10 s. */
const bucketMs = () => z.number().nullable();

export const getAnalytics = adminOperation({
  method: 'get',
  path: '/admin/tenants/:id/analytics',
  role: 'viewer',
  summary: 'Usage history as series, or CSV with Accept: text/csv',
  params: tenantParams,
  query: historyQuerySchema,
  answer: () =>
    answerOf<Analytics>()(
      z.object({
        tenant_id: z.string(),
        from: instant(),
        to: instant(),
        granularity: z.enum(['hour', 'day']),
        group_by: z.array(z.enum(['route', 'status', 'token'])),
        series: z.array(
          z.object({
            t: instant(),
            route: z.string().optional(),
            status: z.string().optional(),
            token: z.string().optional(),
            requests: int(),
            units: int(),
            p50_ms: bucketMs(),
            p95_ms: bucketMs(),
            cache_hits: int(),
            cache_lookups: int(),
            billable: int(),
            self_service: int(),
          }),
        ),
        refusals: z.array(
          z.object({
            t: instant(),
            policy: z.string(),
            token: z.string().optional(),
            count: int(),
          }),
        ),
      }),
    ),
});
