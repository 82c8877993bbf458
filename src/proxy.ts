/**
 * Mounts every entry of the route table: authenticate, validate, limit, forward.
 * A path the table knows with a method it does not gets a 405 envelope.
 */
import { Hono, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { createMiddleware } from 'hono/factory';
import type { HonoEnv } from './env';
import { GatewayError } from './errors';
import { tenantAuth } from './middleware/auth';
import { tenantLimits } from './middleware/limits';
import { requireJson, validated } from './middleware/validate';
import { resolveRoute } from './routes/overrides';
import { noQuery } from './routes/schemas';
import { ROUTE_SPECS } from './routes/table';
import type { RouteSpec } from './routes/types';
import { callPlatform } from './upstream/fetch';
import { buildUpstreamRequest } from './upstream/request';

export function platformRoutes(specs: readonly RouteSpec[] = ROUTE_SPECS): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();
  for (const spec of specs) {
    const chain: MiddlewareHandler<HonoEnv>[] = [
      tenantAuth(),
      ...(spec.params ? [validated('param', spec.params)] : []),
      validated('query', spec.query ?? noQuery()),
      ...(spec.body ? [limitBody, requireJson(), validated('json', spec.body)] : []),
      tenantLimits(spec),
    ];
    app.on(spec.method, [spec.path], ...chain, async (c) => {
      const route = resolveRoute(spec, c.var.settings.ROUTE_OVERRIDES);
      // Validated outputs: defaults applied, unknown fields already refused.
      const valid = (target: 'param' | 'query' | 'json') => c.req.valid(target as never) as Record<string, unknown>;
      const params = spec.params ? valid('param') : {};
      const body = spec.body ? valid('json') : undefined;
      checkBodyMatchesPath(params, body);
      const request = buildUpstreamRequest(c.var.settings, {
        route,
        params,
        query: valid('query'),
        body,
        platformKey: c.var.tenant.platform_key,
        requestId: c.var.requestId,
        callerHeaders: c.req.raw.headers,
      });
      const result = await callPlatform(request, c.var.settings.UPSTREAM_TIMEOUT_MS);
      return c.body(result.text, result.status as 200, { 'content-type': 'application/json; charset=utf-8' });
    });
  }
  for (const [path, methods] of methodsByPath(specs)) {
    app.all(path, () => {
      throw new GatewayError('METHOD_NOT_ALLOWED', `Method not allowed; ${path} accepts ${methods.join(', ')}`, {}, { Allow: methods.join(', ') });
    });
  }
  return app;
}

/** Hono's bodyLimit, sized by the MAX_BODY_BYTES setting of this request's env. */
const limitBody = createMiddleware<HonoEnv>((c, next) => {
  const maxSize = c.var.settings.MAX_BODY_BYTES;
  return bodyLimit({
    maxSize,
    onError: () => {
      throw new GatewayError('PAYLOAD_TOO_LARGE', `Request body exceeds the limit of ${maxSize} bytes`);
    },
  })(c, next);
});

/** The live client repeats session_id in a rename body; a mismatch is a mistake. */
function checkBodyMatchesPath(params: Record<string, unknown>, body: unknown) {
  if (typeof body !== 'object' || body === null) return;
  for (const [name, value] of Object.entries(params)) {
    const inBody = (body as Record<string, unknown>)[name];
    if (inBody !== undefined && inBody !== value) {
      throw new GatewayError('VALIDATION_FAILED', `${name} in the body must match the path`, {
        errors: [{ location: 'body', field: name, message: `${name} in the body must match the path` }],
      });
    }
  }
}

function methodsByPath(specs: readonly RouteSpec[]): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const spec of specs) map.set(spec.path, [...(map.get(spec.path) ?? []), spec.method]);
  return map;
}
