/** The operator API, behind ADMIN_TOKEN: tenants, tokens, limits, cache, audit, stats. */
import { Hono } from 'hono';
import { l1Stats } from '../cache/read-through';
import { ok } from '../errors';
import { operationId } from '../observability/operation-id';
import { adminDocument } from '../openapi/admin-document';
import { isolateStats } from '../stats';
import type { HonoEnv } from '../types/context';
import type { Whoami } from '../types/wire';
import { breakerStates } from '../upstream/resilient';
import { alertRoutes } from './alerts';
import { analyticsRoutes } from './analytics';
import { auditRoutes } from './audit';
import { adminAuth } from './auth';
import { keyCheckRoutes } from './key-check';
import { limitRoutes } from './limits';
import { operationRoutes } from './operations';
import { overviewRoutes } from './overview';
import { planRoutes } from './plans';
import { portalLinkRoutes } from './portal-links';
import { requestRoutes } from './requests';
import { tenantRoutes } from './tenants';
import { tokenRoutes } from './tokens';

export function adminRoutes(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();
  app.use('*', operationId('admin'), adminAuth());
  // Who the caller is, for the console: what it shows and which controls; and the
  // settings its forms explain (local webhook targets are allowed only in development).
  app.get('/whoami', (c) => {
    const operator = c.get('operator');
    if (!operator) return c.json(ok(null));
    const { actor, role, via } = operator;
    const settings = c.get('settings');
    return c.json(
      ok<Whoami>({
        actor,
        role,
        via,
        settings: { webhook_local_targets: settings.WEBHOOK_LOCAL_TARGETS },
      }),
    );
  });
  app.route('/tenants', tenantRoutes());
  app.route('/tenants', tokenRoutes());
  app.route('/tenants', limitRoutes());
  app.route('/tenants', analyticsRoutes());
  app.route('/tenants', requestRoutes());
  app.route('/tenants', alertRoutes());
  app.route('/tenants', portalLinkRoutes());
  app.route('/plans', planRoutes());
  app.route('/overview', overviewRoutes());
  // One cheap read with a key, typed or stored: what the platform says of it.
  app.route('/', keyCheckRoutes());
  app.route('/', auditRoutes());
  // What these settings serve, and the scopes a token may be given (the console's pickers).
  app.route('/operations', operationRoutes());
  // This isolate's work counters, for the benchmark and for operators (docs/OBSERVABILITY.md, "Work counters").
  app.get('/stats', (c) =>
    c.json(ok({ isolate: { ...isolateStats, l1: l1Stats(), breakers: breakerStates() } })),
  );
  // The operator API's own contract (partners get /openapi.json).
  app.get('/openapi.json', (c) => c.json(adminDocument()));
  return app;
}
