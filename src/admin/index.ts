/** The operator API, behind ADMIN_TOKEN: tenants, tokens, limits, cache, audit. */
import { Hono } from 'hono';
import type { HonoEnv } from '../env';
import { auditRoutes } from './audit';
import { adminAuth } from './auth';
import { limitRoutes } from './limits';
import { tenantRoutes } from './tenants';
import { tokenRoutes } from './tokens';

export function adminRoutes(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();
  app.use('*', adminAuth());
  app.route('/tenants', tenantRoutes());
  app.route('/tenants', tokenRoutes());
  app.route('/tenants', limitRoutes());
  app.route('/', auditRoutes());
  return app;
}
