/**
 * The request context: the Worker's bindings and the per-request variables,
 * in one typed Hono env. Types only, importing nothing outside types/, so that
 * every layer, errors.ts included, may use them (docs/ARCHITECTURE.md).
 */
import type { RequestIdVariables } from 'hono/request-id';
import type { ResolvedRoute, ValidatedInput } from './routes';
import type { Settings } from './settings';
import type { Tenant, TokenRecord } from './tenants';
import type { Operator } from './wire';

export type { Operator };

/**
 * Settings that wrangler.toml does not declare (docs/CONFIGURATION.md, "Vars"): strings
 * when set as vars, or objects when set as JSON vars.
 */
type OptionalSettings = Partial<
  Record<
    | 'ROUTE_OVERRIDES'
    | 'PLATFORM_OPERATIONS'
    | 'MAX_UPLOAD_BYTES'
    | 'TENANT_MEMO_TTL_MS'
    | 'MAX_BODY_BYTES'
    | 'DEFAULT_LIMITS'
    | 'LIMITS_ENABLED'
    | 'LEASE_MAX_MS'
    | 'LEASE_BROKERS'
    | 'BROKER_LEASE_MS'
    | 'L1_CACHE_BYTES'
    | 'PLATFORM_KEY_PATTERN'
    | 'USAGE_RETENTION_DAYS'
    | 'USAGE_HISTORY'
    | 'USAGE_FLUSH_TIMER'
    | 'LOG_SAMPLE_RATE'
    | 'LIMITER_FAILURE_MODE'
    | 'LEGACY_TOKENS_UNTIL'
    | 'OPERATOR_API'
    | 'PORTAL_ORIGIN'
    | 'WEBHOOK_LOCAL_TARGETS'
    | 'WS_QUERY_TOKENS'
    | 'BROWSER_PARTITION_SHARE'
    | 'SELF_SERVICE_PER_MINUTE'
    | 'CIRCUIT_FAILURES'
    | 'CIRCUIT_FAILURE_RATIO'
    | 'CIRCUIT_WINDOW_S'
    | 'CIRCUIT_MIN_CALLS'
    | 'CIRCUIT_COOLDOWN_S'
    | 'RETRY_BUDGET_RATIO'
    | 'RETRY_BUDGET_MIN_PER_S'
    | 'MAX_PLATFORM_PAUSE_S'
    | 'IDEMPOTENCY_REQUIRED'
    | 'ACCESS_TEAM_DOMAIN'
    | 'ACCESS_AUD'
    | 'ACCESS_ROLES'
    | 'ACCESS_LOCAL_ISSUER',
    string | Record<string, unknown>
  >
>;

/**
 * Bindings, vars and secrets as `wrangler types` generates them from
 * wrangler.toml and .dev.vars.example (worker-configuration.d.ts), plus the
 * optional settings. Secrets may be unset, which the settings parser reports.
 */
export type Bindings = Omit<Env, 'ADMIN_TOKEN' | 'KEY_ENCRYPTION_KEY'> &
  Partial<Pick<Env, 'ADMIN_TOKEN' | 'KEY_ENCRYPTION_KEY'>> &
  OptionalSettings & {
    /** Optional Workers Analytics Engine dataset: one point per request (docs/ANALYTICS.md). */
    ANALYTICS?: AnalyticsEngineDataset;
  };

export interface Variables extends RequestIdVariables {
  settings: Settings;
  /** What the pipeline did with the request, for its log line (observability/request-log.ts). */
  obs: Observation;
  tenant: Tenant;
  token: TokenRecord;
  /**
   * The tenant and token a presented token names, once authentication has found it,
   * before its checks: refused requests (revoked, out of scope, an unknown path) are
   * counted in that tenant's usage history too (observability/request-log.ts).
   */
  principal?: { tenantId: string; tokenId: string };
  /** A platform route's validated path, query and body (middleware/validate.ts). */
  input: ValidatedInput;
  /** A platform route's configured route (ROUTE_OVERRIDES applied), resolved once by proxy.ts. */
  route?: ResolvedRoute;
  /** A declared operation's path parameters, as its match found them (proxy.ts). */
  routeParams?: Record<string, string>;
  /** From the TenantGuard's verdict; part of every cache key (absent = bypass). */
  cacheVersion?: string;
  /** Set for browser tokens: their own rate-limit partition inside the tenant's. */
  partition?: string;
  /** Who is calling the operator API (admin/auth.ts): audit entries name them. */
  operator?: Operator;
  /** W3C trace context: the caller's trace or a new one (observability/trace.ts). */
  trace?: TraceContext;
  /**
   * What the request's platform call did (forward.ts): the handler puts it here for the
   * steps around it (middleware/idempotency.ts keeps a write's claim when the platform acted).
   */
  forwarded?: ForwardOutcome;
}

/** What the gateway sends on: the trace id, its own traceparent, the caller's tracestate. */
export interface TraceContext {
  traceId: string;
  traceparent: string;
  tracestate?: string;
}

export type HonoEnv = { Bindings: Bindings; Variables: Variables };

export type CacheStatus = 'HIT' | 'MISS' | 'STALE' | 'BYPASS';
/** Where a hit came from: this isolate's memory or the Cache API. */
export type CacheTier = 'L1' | 'L2';

/** A platform answer as the gateway passes it on (upstream/normalize.ts reads it). */
export interface PlatformAnswer {
  status: number;
  body: Uint8Array<ArrayBuffer>;
  /** Parsed envelope; null when served from the cache (only successes are cached). */
  envelope: { code: number } | null;
  /** The body decoded, where it already was, so nothing decodes it twice. */
  text?: string;
}

/** What forward() did with one platform call (src/forward.ts), for whatever reads it after. */
export interface ForwardOutcome {
  /** The answer as this caller may see it; null when the call failed. */
  answer: PlatformAnswer | null;
  /** Why there is no answer: what the caller is told instead. */
  error: unknown;
  /** The platform may have acted: a write went out and was not refused as a pause. */
  acted: boolean;
  /** Platform attempts made (2 when a read was retried; a stale answer's refresh counts). */
  attempts: number;
  upstreamStatus: number | undefined;
  upstreamMs: number | undefined;
  /** Where the answer came from; undefined when the call failed. */
  cache: CacheStatus | undefined;
  tier: CacheTier | undefined;
  /** Seconds since the answer was fetched from the platform. */
  age: number;
  /** Why a stale entry answered because the platform failed (`breaker_open`, …). */
  staleReason: string | undefined;
  /** The key's health: the status (401 or 403) with which the platform refused the tenant's key. */
  keyRejected: number | undefined;
  /** What may be kept of the answer (an Idempotency-Key's replay): every secret masked. */
  keptAnswer(): KeptAnswer | null;
}

/** An answer as kept: its status, its body with every platform secret masked, its code. */
export interface KeptAnswer {
  status: number;
  body: string;
  code: number;
}

/** What the pipeline did with a request, noted as it goes (observability/request-log.ts). */
export interface Observation {
  /**
   * Operation id (`team.list`, …), or what else answered (`admin`, `auth.browser_token`).
   * The log line and the Analytics Engine point call it `route` (request-log.ts).
   */
  operation?: string;
  cache?: 'HIT' | 'MISS' | 'STALE' | 'BYPASS' | 'L1';
  limiter?: 'admitted' | 'refused' | 'unavailable';
  /** The policy that refused the request. */
  refusedBy?: string;
  cost?: number;
  /** Body bytes of the answer, where known. */
  bytes?: number;
  /**
   * The envelope code of the answer, where the handler knows it (a platform code passes through).
   */
  code?: number;
  /** Why a cached answer was served past its grace (stale-if-error), e.g. `breaker_open`. */
  staleReason?: string;
  /** What an Idempotency-Key did: claimed, replayed, in_flight or mismatch. */
  idempotency?: 'claimed' | 'replay' | 'in_flight' | 'mismatch';
  /** The W3C trace id of the request (observability/trace.ts). */
  traceId?: string;
}

export type { ValidatedInput };
