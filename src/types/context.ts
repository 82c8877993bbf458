/**
 * The request context: the Worker's bindings and the per-request variables,
 * in one typed Hono env. Types only, importing nothing outside types/, so that
 * every layer, errors.ts included, may use them (docs/ARCHITECTURE.md).
 */
import type { RequestIdVariables } from 'hono/request-id';
import type { ConfiguredOperation, ValidatedInput } from './operations';
import type { ForwardOutcome, IdempotencyClaim, LimiterVerdict } from './outcomes';
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
    | 'ACCESS_LOCAL_ISSUER'
    | 'OAUTH_REGISTRATION'
    | 'OAUTH_ACCESS_TOKEN_TTL_S'
    | 'OAUTH_REFRESH_TOKEN_TTL_S'
    | 'OAUTH_CLIENTS_MAX'
    | 'USAGE_EXPORT'
    | 'USAGE_SINK_URL'
    | 'USAGE_SINK_KEY_ID'
    | 'USAGE_SINK_SECRET'
    | 'USAGE_SINK_TOKEN'
    | 'USAGE_EVENT_SOURCE'
    | 'USAGE_RETRY_BASE_S',
    string | Record<string, unknown>
  >
>;

/**
 * Bindings, vars and secrets as `wrangler types` generates them from
 * wrangler.toml and .dev.vars.example (worker-configuration.d.ts), plus the
 * optional settings. Secrets may be unset, which the settings parser reports.
 */
export type Bindings = Omit<
  Env,
  'ADMIN_TOKEN' | 'KEY_ENCRYPTION_KEY' | 'USAGE_EVENTS' | 'USAGE_ARCHIVE'
> &
  // The usage export's queue and archive (docs/BILLING.md): without them, no export.
  Partial<Pick<Env, 'ADMIN_TOKEN' | 'KEY_ENCRYPTION_KEY' | 'USAGE_EVENTS' | 'USAGE_ARCHIVE'>> &
  OptionalSettings & {
    /** Optional Workers Analytics Engine dataset: one point per request (docs/ANALYTICS.md). */
    ANALYTICS?: AnalyticsEngineDataset;
  };

export interface Variables extends RequestIdVariables {
  settings: Settings;
  tenant: Tenant;
  token: TokenRecord;
  /**
   * The tenant and token a presented token names, once authentication has found it,
   * before its checks: refused requests (revoked, out of scope, an unknown path) are
   * counted in that tenant's usage history too (observability/request-log.ts).
   */
  principal?: { tenantId: string; tokenId: string };
  /** A platform operation's validated path, query and body (middleware/validate.ts). */
  input: ValidatedInput;
  /** The platform operation as configured (ROUTE_OVERRIDES applied), set once by proxy.ts. */
  operation?: ConfiguredOperation;
  /** A declared operation's path parameters, as its match found them (proxy.ts). */
  declaredParams?: Record<string, string>;
  /** From the TenantGuard's verdict; part of every cache key (absent = bypass). */
  cacheVersion?: string;
  /** Set for browser tokens: their own rate-limit partition inside the tenant's. */
  partition?: string;
  /** Who is calling the operator API (admin/auth.ts): audit entries name them. */
  operator?: Operator;
  /** W3C trace context: the caller's trace or a new one (observability/trace.ts). */
  trace?: TraceContext;
  /*
   * What each step did with the request, each set once by the step that did it and read
   * after (the request log builds its line from them: observability/request-log.ts).
   */
  /**
   * Operation id (`team.list`, …), or what else answers (`admin`, `auth.browser_token`):
   * observability/operation-id.ts, proxy.ts. The log line calls it `route`.
   */
  operationId?: string;
  /** What the tenant's limits decided (middleware/limits.ts). */
  limiter?: LimiterVerdict;
  /** What an Idempotency-Key's claim found (middleware/idempotency.ts). */
  idempotency?: IdempotencyClaim;
  /**
   * What the request's platform call did (forward.ts): the handler puts it here for the
   * steps around it (middleware/idempotency.ts keeps a write's claim when the platform acted).
   */
  forwarded?: ForwardOutcome;
  /** The envelope code of an error answer the gateway made (errors.ts). */
  errorCode?: number;
}

/** What the gateway sends on: the trace id, its own traceparent, the caller's tracestate. */
export interface TraceContext {
  traceId: string;
  traceparent: string;
  tracestate?: string;
}

export type HonoEnv = { Bindings: Bindings; Variables: Variables };

export type { ValidatedInput };
