/**
 * Mounts every entry of the route table: authenticate, check scope, validate,
 * limit, then forward (through the cache for cacheable reads), and mask
 * platform secrets for tokens that may not see them. A path the table knows
 * with a method it does not gets a 405 envelope.
 */
import { type Context, Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { GatewayError } from './errors';
import { forward, secretShapes } from './forward';
import { requireScope, tenantAuth } from './middleware/auth';
import { tenantLimits } from './middleware/limits';
import { validateInput } from './middleware/validate';
import { named } from './observability/named';
import { configuredRoute } from './routes/overrides';
import { ROUTE_SPECS } from './routes/table';
import type { PlatformReader, RouteSpec } from './routes/types';
import { hasScope } from './tenants/scopes';
import type { HonoEnv } from './types/context';
import { parseEnvelope } from './upstream/normalize';
import { maskSecrets } from './upstream/redact';

export function platformRoutes(specs: readonly RouteSpec[] = ROUTE_SPECS): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();
  const byId = new Map(specs.map((s) => [s.id, s]));

  for (const spec of specs) {
    app.on(
      spec.method,
      [spec.path],
      named(spec.id),
      tenantAuth(),
      requireScope(spec),
      validateInput(spec),
      tenantLimits(spec.group, (settings) => configuredRoute(spec, settings.ROUTE_OVERRIDES).cost),
      async (c) => {
        const route = configuredRoute(spec, c.get('settings').ROUTE_OVERRIDES);
        await spec.check?.(c.get('input'), platformReader(c, byId));
        const outcome = await forward(c, route, c.get('input'));
        const seesSecrets = hasScope(c.get('token').scopes, 'apikeys:admin') && !c.get('partition');
        const body =
          spec.secrets && !seesSecrets
            ? maskSecrets(outcome.result.body, secretShapes(c))
            : outcome.result.body;
        const headers: Record<string, string> = {
          'content-type': 'application/json; charset=utf-8',
        };
        if (spec.cache) {
          headers['X-Cache'] = outcome.status;
          headers.Age = String(outcome.age);
        }
        const status = outcome.result.status;
        if (!isContentful(status)) throw new GatewayError('UPSTREAM_HTTP_ERROR');
        const obs = c.get('obs');
        obs.cache = outcome.tier === 'L1' ? 'L1' : outcome.status;
        obs.code = outcome.result.envelope?.code ?? 0;
        obs.bytes = body.byteLength;
        return c.body(body, status, headers);
      },
    );
  }
  for (const [path, methods] of methodsByPath(specs)) {
    const allow = methods.join(', ');
    app.all(path, () => {
      throw new GatewayError('METHOD_NOT_ALLOWED', {
        message: `Method not allowed; ${path} accepts ${allow}`,
        headers: { Allow: allow },
      });
    });
  }
  return app;
}

/**
 * Lets a route's check read another operation's data with this request's tenant, through the cache.
 */
function platformReader(c: Context<HonoEnv>, byId: Map<string, RouteSpec>): PlatformReader {
  return {
    async data(routeId) {
      const spec = byId.get(routeId);
      if (!spec) throw new GatewayError('INTERNAL', { message: `No operation ${routeId}` });
      const route = configuredRoute(spec, c.get('settings').ROUTE_OVERRIDES);
      const { result } = await forward(
        c,
        route,
        { params: {}, query: {} },
        { callerCacheControl: false },
      );
      const envelope = result.envelope ?? parseEnvelope(result.body);
      if (envelope?.code !== 0) {
        throw new GatewayError('UPSTREAM_HTTP_ERROR', {
          message: `Platform refused ${routeId}: ${envelope?.msg ?? 'no envelope'}`,
          details: { upstream_code: envelope?.code },
        });
      }
      return envelope.data;
    },
  };
}

/** Statuses that may carry a body; the platform's envelopes always do. */
function isContentful(status: number): status is ContentfulStatusCode {
  return status >= 200 && status <= 599 && status !== 204 && status !== 205 && status !== 304;
}

function methodsByPath(specs: readonly RouteSpec[]): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const spec of specs) map.set(spec.path, [...(map.get(spec.path) ?? []), spec.method]);
  return map;
}
