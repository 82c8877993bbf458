/** The operator API's fleet overview (docs/OBSERVABILITY.md, "Fleet overview"). */
import * as z from 'zod';
import { intFieldOr } from '../operations/schemas';
import type { FleetSeries, Overview } from '../types/wire';
import { instant, int } from './fields';
import { adminOperation, answerOf } from './operation';

export const overviewQuery = z.strictObject({
  /** The last this many hours, the running one included (the boards keep 7 days and an hour). */
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

export const seriesQuery = z.strictObject({
  /** The last this many hours, the running one included: 24 (a day) to 168 (7 days). */
  hours: intFieldOr('hours', 1, 168, 24),
});

const tops = () => z.array(z.tuple([int(), int()]));

export const getFleetSeries = adminOperation({
  method: 'get',
  path: '/admin/overview/series',
  role: 'viewer',
  summary:
    "The fleet by hour: requests, 4xx, 5xx, refusals and latency across tenants, and each hour's busiest tenants",
  description:
    'From the fleet boards (at most a minute behind; they keep 7 days): 16 Durable Object ' +
    "calls in parallel. p50 and p95 come from the tenants' latency histograms added up. " +
    "Each hour names its 5 tenants with the most of each figure, so a tenant's share of " +
    'an hour can be said.',
  query: seriesQuery,
  answer: () =>
    answerOf<FleetSeries>()(
      z.object({
        from: instant(),
        hours: int(),
        points: z.array(
          z.object({
            t: instant(),
            requests: int(),
            errors_4xx: int(),
            errors_5xx: int(),
            refused: int(),
            p50_ms: int().nullable(),
            p95_ms: int().nullable(),
            top: z.object({
              requests: tops(),
              errors_4xx: tops(),
              errors_5xx: tops(),
              refused: tops(),
            }),
          }),
        ),
        tenants: z.array(z.object({ tenant_id: z.string(), name: z.string().nullable() })),
        shards: int(),
        ms: z.number(),
      }),
    ),
});
