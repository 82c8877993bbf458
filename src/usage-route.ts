/**
 * `GET /usage`: a tenant's own view, with its own token (scope usage:read):
 * its limits, the current windows (the token's own meters too), and its last
 * 30 days by day. It reads only the caller's tenant. A self-service read: it
 * spends the token's own small meter, never the tenant's policies or quotas,
 * so it answers while those are spent (docs/LIMITS.md, "Self-service reads").
 */
import { Hono } from 'hono';
import { ok } from './errors';
import { HOUR_MS, hourOf } from './metering/usage';
import { requireScope, tenantAuth } from './middleware/auth';
import { tenantLimits } from './middleware/limits';
import { validated } from './middleware/validate';
import { guardFor } from './objects/tenant/tenant-guard';
import { operationId } from './observability/operation-id';
import { recentPage } from './observability/recent-page';
import { recentQuery, recentQuerySchema } from './observability/recent-query';
import { USAGE_SCOPE } from './tenants/scopes';
import type { HonoEnv } from './types/context';
import type { OwnUsage, RecentRequestPage } from './types/wire';

/** How far back a tenant's own view goes: by UTC day, and by hour. */
export const OWN_USAGE_DAYS = 30;
export const OWN_USAGE_HOURS = 48;

export function usageRoutes(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();
  app.get(
    '/usage',
    operationId('usage'),
    tenantAuth(),
    requireScope(USAGE_SCOPE),
    tenantLimits('self', () => 1),
    async (c) => {
      const tenant = c.get('tenant');
      const now = Date.now();
      const today = Math.floor(now / 86_400_000) * 86_400_000;
      const hour = hourOf(now);
      // One guard call: the meters now, 30 days by day, 48 hours by hour.
      const view = await guardFor(c.env, tenant.id)
        .limits()
        .ownView(now, c.get('settings').DEFAULT_LIMITS, c.get('token').id, [
          {
            from: today - (OWN_USAGE_DAYS - 1) * 86_400_000,
            to: now,
            granularity: 'day',
            groupBy: [],
          },
          {
            from: hour - (OWN_USAGE_HOURS - 1) * HOUR_MS,
            to: now,
            granularity: 'hour',
            groupBy: [],
          },
        ]);
      const [days, hours] = view.history;
      return c.json(
        ok<OwnUsage>({
          tenant_id: tenant.id,
          limits: view.usage.limits,
          meters: view.usage.meters,
          days: days?.series ?? [],
          refusals: days?.refusals ?? [],
          hours: hours?.series ?? [],
          hourly_refusals: hours?.refusals ?? [],
          refusals_by_operation: {
            days: days?.byOperation ?? [],
            hours: hours?.byOperation ?? [],
          },
        }),
      );
    },
  );
  // The partner's own refused and failed requests, with the reason: a 429 or a 401
  // can be understood without asking anyone (docs/OBSERVABILITY.md, "Recent requests").
  app.get(
    '/usage/requests',
    operationId('usage.requests'),
    tenantAuth(),
    requireScope(USAGE_SCOPE),
    tenantLimits('self', () => 1),
    validated('query', recentQuerySchema),
    async (c) => {
      const query = recentQuery(c.req.valid('query'), true);
      const page = await guardFor(c.env, c.get('tenant').id).recentRequests().query(query);
      return c.json(ok<RecentRequestPage>(recentPage(page)), 200, {
        'Cache-Control': 'private, no-store',
      });
    },
  );
  return app;
}
