/** The operator API's fleet overview (docs/OBSERVABILITY.md, "Fleet overview"). */
import * as z from 'zod';
import { intFieldOr } from '../routes/schemas';
import type { Overview } from '../types/wire';
import { instant, int } from './fields';
import { adminOperation, answerOf } from './operation';

export const overviewQuery = z.strictObject({
  /** The last this many hours, the running one included (the boards keep 25). */
  hours: intFieldOr('hours', 1, 24, 24),
  /** Tenants in each top list. */
  limit: intFieldOr('limit', 1, 50, 10),
});

const fleetTenant = () =>
  z.object({
    tenant_id: z.string(),
    /** Its name now (null: no longer a tenant). */
    name: z.string().nullable(),
    requests: int(),
    refused: int(),
    errors_5xx: int(),
    key_rejected: int(),
    self_service: int(),
    key_status: int().nullable(),
    key_at: instant().nullable(),
  });

export const getOverview = adminOperation({
  method: 'get',
  path: '/admin/overview',
  role: 'viewer',
  summary:
    'The last hours across tenants: top tenants by requests, refusals and 5xx, and every tenant whose platform key the platform refused',
  description:
    'From the fleet boards the TenantGuards report to (at most a minute behind): 16 ' +
    'Durable Object calls in parallel, whatever the number of tenants.',
  query: overviewQuery,
  answer: () =>
    answerOf<Overview>()(
      z.object({
        since: instant(),
        hours: int(),
        tenants: int(),
        totals: z.object({
          requests: int(),
          refused: int(),
          errors_5xx: int(),
          key_rejected: int(),
          self_service: int(),
        }),
        top_requests: z.array(fleetTenant()),
        top_refused: z.array(fleetTenant()),
        top_errors: z.array(fleetTenant()),
        key_rejected: z.array(fleetTenant()),
        shards: int(),
        ms: z.number(),
      }),
    ),
});
