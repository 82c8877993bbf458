import type { z } from 'zod';
import type { ValidatedInput } from '../types/context';
import type { CachePolicy, RouteGroup } from '../types/settings';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** Which request header carries the platform key upstream. */
export type CredentialHeader = 'authorization' | 'x-api-key';

/** Each resource group once, in this order; scopes and limits are derived from them. */
const GROUPS: Record<RouteGroup, true> = {
  apikeys: true,
  calls: true,
  teams: true,
  agents: true,
  sessions: true,
  browsers: true,
};
export const ROUTE_GROUPS: readonly RouteGroup[] = Object.keys(GROUPS) as RouteGroup[];

/**
 * One upstream operation. Everything the gateway does for a route is driven
 * by this entry: matching, validation, forwarding, credential injection.
 */
export interface RouteSpec {
  /** Stable operation id: used in ROUTE_OVERRIDES, logs and docs. */
  id: string;
  method: HttpMethod;
  /** Gateway path in Hono syntax; the same path as the platform's. */
  path: string;
  /** Upstream path template (`:name` placeholders) when it differs from `path`; overridable. */
  upstreamPath?: string;
  credential: CredentialHeader;
  group: RouteGroup;
  /** Units this request counts against rate policies and quotas; see routeCost(). */
  cost?: number;
  /** Responses carry platform secrets (`api_key`): masked without apikeys:admin. */
  secrets?: true;
  /** Cacheable reads only: freshness, grace and stale-if-error periods; overridable. */
  cache?: CachePolicy;
  /**
   * The operation's deadline in ms when it differs from its kind's (reads 10 s, writes 15 s);
   * overridable; UPSTREAM_TIMEOUT_MS is the ceiling (docs/RESILIENCE.md, "Per-operation deadlines").
   */
  timeoutMs?: number;
  /** Checks that need platform data, run after validation (calls.list's status). */
  check?: (input: ValidatedInput, platform: PlatformReader) => Promise<void>;
  params?: z.ZodType<Record<string, unknown>>;
  /**
   * Strict object schema; its output (defaults applied) is what goes upstream. Absent: no query
   * parameters.
   */
  query?: z.ZodType<Record<string, unknown>>;
  body?: z.ZodType<Record<string, unknown>>;
}

/** A route as configured: overrides applied, upstream path and cost settled. */
export type ResolvedRoute = RouteSpec & { upstreamPath: string; cost: number; timeoutMs: number };

/** Lets a check read another operation's data, through the cache where it has one. */
export interface PlatformReader {
  data(routeId: string): Promise<unknown>;
}
