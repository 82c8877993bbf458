/**
 * Mounts every entry of the route table: authenticate, validate, limit, then
 * forward (through the cache for cacheable reads). A path the table knows
 * with a method it does not gets a 405 envelope.
 */
import { type Context, Hono, type MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { createMiddleware } from 'hono/factory';
import { cacheKeyUrl } from './cache/key';
import { type CacheOutcome, readThrough } from './cache/read-through';
import type { HonoEnv } from './env';
import { GatewayError } from './errors';
import { requireScope, tenantAuth } from './middleware/auth';
import { tenantLimits } from './middleware/limits';
import { requireJson, validated } from './middleware/validate';
import { resolveRoute, routeCost } from './routes/overrides';
import { noQuery } from './routes/schemas';
import { ROUTE_SPECS } from './routes/table';
import type { PlatformReader, RouteSpec, ValidatedInput } from './routes/types';
import { hasScope } from './tenants/scopes';
import { callPlatform } from './upstream/fetch';
import { maskApiKeys } from './upstream/redact';
import { buildUpstreamRequest } from './upstream/request';

type Ctx = Context<HonoEnv>;

export function platformRoutes(specs: readonly RouteSpec[] = ROUTE_SPECS): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();
  const byId = new Map(specs.map((s) => [s.id, s]));

  for (const spec of specs) {
    const chain: MiddlewareHandler<HonoEnv>[] = [
      tenantAuth(),
      requireScope(spec),
      ...(spec.params ? [validated('param', spec.params)] : []),
      validated('query', spec.query ?? noQuery()),
      ...(spec.body
        ? [limitBody, requireJson(), validated('json', spec.body), bodyMatchesPath]
        : []),
      tenantLimits(spec.group, (settings) =>
        routeCost(resolveRoute(spec, settings.ROUTE_OVERRIDES)),
      ),
    ];
    app.on(spec.method, [spec.path], ...chain, async (c) => {
      const input = validatedInput(c, spec);
      await spec.check?.(input, platformReader(c, byId));
      const outcome = await read(c, spec, input);
      const seesSecrets = hasScope(c.var.token.scopes, 'apikeys:admin') && !c.var.partition;
      const text =
        spec.secrets && !seesSecrets ? maskApiKeys(outcome.result.text) : outcome.result.text;
      const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
      if (spec.cache) {
        headers['X-Cache'] = outcome.status;
        headers.Age = String(outcome.age);
      }
      return c.body(text, outcome.result.status as 200, headers);
    });
  }
  for (const [path, methods] of methodsByPath(specs)) {
    app.all(path, () => {
      throw new GatewayError(
        'METHOD_NOT_ALLOWED',
        `Method not allowed; ${path} accepts ${methods.join(', ')}`,
        {},
        { Allow: methods.join(', ') },
      );
    });
  }
  return app;
}

/** Lets a route's check read another operation's data with this request's tenant, through the cache. */
function platformReader(c: Ctx, byId: Map<string, RouteSpec>): PlatformReader {
  return {
    async data(routeId) {
      const { result } = await read(c, byId.get(routeId)!, {
        params: {},
        query: {},
        body: undefined,
      });
      const envelope = JSON.parse(result.text) as { code: number; msg: string; data: unknown };
      if (envelope.code !== 0)
        throw new GatewayError(
          'UPSTREAM_HTTP_ERROR',
          `Platform refused ${routeId}: ${envelope.msg}`,
          { upstream_code: envelope.code },
        );
      return envelope.data;
    },
  };
}

/** One platform read or write; cacheable reads go through the cache. */
async function read(c: Ctx, spec: RouteSpec, input: ValidatedInput): Promise<CacheOutcome> {
  const settings = c.var.settings;
  const route = resolveRoute(spec, settings.ROUTE_OVERRIDES);
  const fetchFresh = () =>
    callPlatform(
      buildUpstreamRequest(settings, {
        route,
        ...input,
        platformKey: c.var.tenant.platform_key,
        requestId: c.var.requestId,
        callerHeaders: c.req.raw.headers,
      }),
      settings.UPSTREAM_TIMEOUT_MS,
    );
  if (!route.cache) return { result: await fetchFresh(), status: 'BYPASS', age: 0 };

  const cacheControl = c.req.header('cache-control') ?? '';
  // Without the TenantGuard's cache version a purge could not reach us: bypass.
  const version = c.var.cacheVersion;
  const key =
    version === undefined || /\bno-store\b/i.test(cacheControl)
      ? null
      : await cacheKeyUrl({
          keyFingerprint: c.var.tenant.key_fingerprint,
          version,
          upstreamBase: settings.PLATFORM_BASE_URL,
          routeId: route.id,
          upstreamPath: route.upstreamPath,
          credential: route.credential,
          params: input.params,
          query: input.query,
        });
  return readThrough({
    key,
    policy: route.cache,
    revalidate: /\bno-cache\b/i.test(cacheControl),
    fetchFresh,
    waitUntil: (p) => c.executionCtx.waitUntil(p),
  });
}

function validatedInput(c: Ctx, spec: RouteSpec): ValidatedInput {
  // Validated outputs: defaults applied, unknown fields already refused.
  const valid = (target: 'param' | 'query' | 'json') =>
    c.req.valid(target as never) as Record<string, unknown>;
  return {
    params: spec.params ? valid('param') : {},
    query: valid('query'),
    body: spec.body ? valid('json') : undefined,
  };
}

/** Hono's bodyLimit, sized by the MAX_BODY_BYTES setting of this request's env. */
const limitBody = createMiddleware<HonoEnv>((c, next) => {
  const maxSize = c.var.settings.MAX_BODY_BYTES;
  return bodyLimit({
    maxSize,
    onError: () => {
      throw new GatewayError(
        'PAYLOAD_TOO_LARGE',
        `Request body exceeds the limit of ${maxSize} bytes`,
      );
    },
  })(c, next);
});

/** The live client repeats session_id in a rename body; a mismatch is a mistake. */
const bodyMatchesPath = createMiddleware<HonoEnv>(async (c, next) => {
  const params = c.req.param() as Record<string, string>;
  const body = c.req.valid('json' as never) as Record<string, unknown>;
  for (const [name, value] of Object.entries(params)) {
    if (body[name] !== undefined && body[name] !== value) {
      throw new GatewayError('VALIDATION_FAILED', `${name} in the body must match the path`, {
        errors: [
          { location: 'body', field: name, message: `${name} in the body must match the path` },
        ],
      });
    }
  }
  await next();
});

function methodsByPath(specs: readonly RouteSpec[]): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const spec of specs) map.set(spec.path, [...(map.get(spec.path) ?? []), spec.method]);
  return map;
}
