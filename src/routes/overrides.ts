/**
 * ROUTE_OVERRIDES lets an operator point any operation at another upstream
 * path or credential header without a code change, e.g.
 * `{"session.create": {"upstream_path": "/v2/session/create", "credential": "authorization",
 * "cost": 20, "timeout_ms": 45000}}`.
 */
import * as z from 'zod';
import type { RouteOverride, RouteOverrides } from '../types/settings';
import { ROUTE_SPECS } from './table';
import type { ResolvedRoute, RouteSpec } from './types';

const override = z.strictObject({
  upstream_path: z
    .string()
    .regex(/^\/[A-Za-z0-9_\-./:]*$/, 'must be an absolute path; `:name` placeholders allowed')
    .optional(),
  credential: z.enum(['authorization', 'x-api-key']).optional(),
  cost: z.number().int().min(0).max(1000).optional(),
  cache: z
    .strictObject({
      ttl_s: z.number().int().min(0).max(86_400),
      grace_s: z.number().int().min(0).max(86_400),
      stale_if_error_s: z
        .number()
        .int()
        .min(0)
        .max(7 * 86_400)
        .optional(),
    })
    .optional(),
  timeout_ms: z.number().int().min(100).max(300_000).optional(),
}) satisfies z.ZodType<RouteOverride>;

const knownIds = new Set(ROUTE_SPECS.map((r) => r.id));

export const routeOverridesSchema = z.record(z.string(), override).superRefine((value, ctx) => {
  for (const id of Object.keys(value)) {
    if (!knownIds.has(id))
      ctx.addIssue({ code: 'custom', path: [id], message: 'is not a known operation id' });
  }
}) satisfies z.ZodType<RouteOverrides>;

/** Default cost: reads 1, other writes 2; entries may set their own (docs/LIMITS.md, "Policies, quotas and costs"). */
function defaultCost(spec: RouteSpec): number {
  return spec.cost ?? (spec.method === 'GET' ? 1 : 2);
}

/** Deadlines by kind: reads are quick or failing; a write may start work upstream. */
export const READ_TIMEOUT_MS = 10_000;
export const WRITE_TIMEOUT_MS = 15_000;

function defaultTimeout(spec: RouteSpec): number {
  return spec.timeoutMs ?? (spec.method === 'GET' ? READ_TIMEOUT_MS : WRITE_TIMEOUT_MS);
}

/** The route as configured: the table entry with the operator's override applied. */
export function resolveRoute(spec: RouteSpec, overrides: RouteOverrides): ResolvedRoute {
  const o = overrides[spec.id];
  // The platform's own path unless the entry or an operator says otherwise.
  if (!o) {
    return {
      ...spec,
      upstreamPath: spec.upstreamPath ?? spec.path,
      cost: defaultCost(spec),
      timeoutMs: defaultTimeout(spec),
    };
  }
  return {
    ...spec,
    upstreamPath: o.upstream_path ?? spec.upstreamPath ?? spec.path,
    credential: o.credential ?? spec.credential,
    cost: o.cost ?? defaultCost(spec),
    timeoutMs: o.timeout_ms ?? defaultTimeout(spec),
    // Only routes the table marks cacheable can be cached.
    cache: spec.cache && (o.cache ?? spec.cache),
  };
}

// Resolved once per overrides object (settings are parsed once per env), not per request.
const resolved = new WeakMap<RouteOverrides, Map<string, ResolvedRoute>>();

/** The configured route for this request's settings, resolved once. */
export function configuredRoute(spec: RouteSpec, overrides: RouteOverrides): ResolvedRoute {
  let routes = resolved.get(overrides);
  if (!routes) {
    routes = new Map();
    resolved.set(overrides, routes);
  }
  let route = routes.get(spec.id);
  if (!route) {
    route = resolveRoute(spec, overrides);
    routes.set(spec.id, route);
  }
  return route;
}

/** The dearest single request under these overrides (a browser partition never holds less). */
export function largestRouteCost(overrides: RouteOverrides): number {
  return Math.max(1, ...ROUTE_SPECS.map((spec) => configuredRoute(spec, overrides).cost));
}
