/**
 * The operator API, behind ADMIN_TOKEN or Access: tenants, tokens, limits, plans,
 * alerts, audit, stats. Each operation is defined once (`*.contract.ts`, listed in
 * contract.ts) and its handler registers with that definition (handle.ts).
 */
import { Hono } from 'hono';
import { operationId } from '../observability/operation-id';
import type { HonoEnv } from '../types/context';
import { alertRoutes } from './alerts';
import { analyticsRoutes } from './analytics';
import { auditRoutes } from './audit';
import { adminAuth } from './auth';
import { configRoutes } from './config';
import { keyCheckRoutes } from './key-check';
import { limitRoutes } from './limits';
import { oauthAdminRoutes } from './oauth';
import { operationRoutes } from './operations';
import { overviewRoutes } from './overview';
import { planRoutes } from './plans';
import { portalLinkRoutes } from './portal-links';
import { requestRoutes } from './requests';
import { systemRoutes } from './system';
import { tenantRoutes } from './tenants';
import { tokenRoutes } from './tokens';
import { usageExportRoutes } from './usage-export';

/** Mounted at ADMIN_BASE (app.ts); its routes are the definitions' paths below it. */
export function adminRoutes(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();
  app.use('*', operationId('admin'), adminAuth());
  for (const routes of [
    systemRoutes,
    tenantRoutes,
    tokenRoutes,
    limitRoutes,
    usageExportRoutes,
    analyticsRoutes,
    requestRoutes,
    alertRoutes,
    portalLinkRoutes,
    oauthAdminRoutes,
    planRoutes,
    overviewRoutes,
    keyCheckRoutes,
    auditRoutes,
    operationRoutes,
    configRoutes,
  ]) {
    routes(app);
  }
  return app;
}
