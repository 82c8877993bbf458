/**
 * Settings as the gateway reads them once parsed (docs/CONFIGURATION.md, "Vars"), and
 * the shapes inside them. Declared here, apart from the zod schemas that
 * parse them (settings.ts, metering/policy.ts, operations/overrides.ts), so that the
 * request context (types/context.ts) needs no runtime module; each schema is
 * checked against its type here with `satisfies`.
 */

import type { CachePolicy, InputSchema, PlatformOperation } from './operations';

export type { CachePolicy };

/**
 * Resource groups of the built-in operation table (operations/groups.ts lists them); scopes and group
 * quotas use them. Operations an operator declares may name other groups.
 */
export type OperationGroup =
  | 'apikeys'
  | 'calls'
  | 'teams'
  | 'agents'
  | 'sessions'
  | 'browsers'
  | 'products'
  | 'reports';

/** One operation's entry in ROUTE_OVERRIDES. */
export interface OperationOverride {
  upstream_path?: string;
  credential?: 'authorization' | 'x-api-key';
  cost?: number;
  cache?: CachePolicy;
  /** The operation's deadline in ms; UPSTREAM_TIMEOUT_MS stays the ceiling. */
  timeout_ms?: number;
  /** Replaces the operation's query schema (made from the operator's JSON Schema). */
  query?: InputSchema;
  /** Replaces the operation's JSON body schema (made from the operator's JSON Schema). */
  body?: InputSchema;
}

/** ROUTE_OVERRIDES: by operation id. */
export type OperationOverrides = Record<string, OperationOverride>;

export interface RatePolicy {
  name: string;
  limit: number;
  window_s: number;
  algorithm?: 'sliding' | 'fixed';
}

export interface QuotaAmounts {
  daily?: number;
  monthly?: number;
}

/** A tenant's limits (DEFAULT_LIMITS, or its own): rate policies, quotas, how isolates admit. */
export interface Limits {
  policies: RatePolicy[];
  quota: QuotaAmounts & { groups?: Partial<Record<OperationGroup, QuotaAmounts>> };
  limiter?: 'leased' | 'exact';
}

/** A gateway token's own limits, counted in addition to its tenant's (no group quotas). */
export interface TokenLimits {
  policies: RatePolicy[];
  quota: QuotaAmounts;
}

export type OperatorRole = 'admin' | 'viewer';

/** ACCESS_ROLES: who, by Access identity, holds each operator role. */
export interface AccessRoles {
  admin: string[];
  viewer: string[];
}

export interface Settings {
  /** No trailing slash. */
  PLATFORM_BASE_URL: string;
  ADMIN_TOKEN?: string;
  /** Cloudflare Access team origin (https://<team>.cloudflareaccess.com), also the JWT's `iss`. */
  ACCESS_TEAM_DOMAIN?: string;
  /** Application Audience tags the Access JWT's `aud` may hold. */
  ACCESS_AUD: string[];
  ACCESS_ROLES: AccessRoles;
  /** `allow`: ACCESS_TEAM_DOMAIN may be a loopback http origin (npm start's local Access). */
  ACCESS_LOCAL_ISSUER: boolean;
  KEY_ENCRYPTION_KEY: string;
  UPSTREAM_TIMEOUT_MS: number;
  PLATFORM_AUTH_SCHEME: string;
  ROUTE_OVERRIDES: OperationOverrides;
  /** Operations an operator declared (operations/declared.ts), in the setting's order. */
  PLATFORM_OPERATIONS: PlatformOperation[];
  TENANT_MEMO_TTL_MS: number;
  MAX_BODY_BYTES: number;
  /** Largest multipart upload body, streamed (middleware/upload.ts). */
  MAX_UPLOAD_BYTES: number;
  DEFAULT_LIMITS: Limits;
  LIMITS_ENABLED: boolean;
  LEASE_MAX_MS: number;
  /** Isolates lease through a regional broker (objects/broker/) rather than from the root. */
  LEASE_BROKERS: boolean;
  /** Longest lease a broker takes from the root. */
  BROKER_LEASE_MS: number;
  L1_CACHE_BYTES: number;
  USAGE_RETENTION_DAYS: number;
  USAGE_HISTORY: boolean;
  /** Whether a usage batch is sent by a timer once it is USAGE_FLUSH_MS old, not only by a later request. */
  USAGE_FLUSH_TIMER: boolean;
  LOG_SAMPLE_RATE: number;
  /** Global flag: matches every platform key in a text. */
  PLATFORM_KEY_PATTERN: RegExp;
  LIMITER_FAILURE_MODE: 'closed' | 'open';
  /** Start of the UTC day from which legacy tokens are refused, ms since the epoch. */
  LEGACY_TOKENS_UNTIL: number;
  /** `allow`: alert webhooks may target local and private addresses (local development). */
  /**
   * `binding`: the operator API answers only through the OperatorApi entrypoint (the
   * console Worker's Service Binding), not on the gateway's own hostname.
   */
  OPERATOR_API: 'public' | 'binding';
  /**
   * Which tokens a session event stream takes from its URL: `browser` (short-lived
   * browser tokens only) or `all` (gateway tokens too, in the platform client's own
   * `api_key` and `authorization` parameters).
   */
  WS_QUERY_TOKENS: 'browser' | 'all';
  /**
   * The gateway's public origin, where partner portal links point; unset: portal
   * links are refused (never taken from the request's Host).
   */
  PORTAL_ORIGIN: string | undefined;
  WEBHOOK_LOCAL_TARGETS: boolean;
  BROWSER_PARTITION_SHARE: number;
  /** Self-service reads (GET /token, GET /usage) one token may make a minute (docs/LIMITS.md). */
  SELF_SERVICE_PER_MINUTE: number;
  /** Circuit breaker (docs/RESILIENCE.md): failures in a row that open it. */
  CIRCUIT_FAILURES: number;
  /** Share of failed calls in the window that opens it (above 1: never). */
  CIRCUIT_FAILURE_RATIO: number;
  CIRCUIT_WINDOW_S: number;
  /** Calls the window must hold before the ratio counts. */
  CIRCUIT_MIN_CALLS: number;
  /** How long it stays open before one probe goes through. */
  CIRCUIT_COOLDOWN_S: number;
  /** Retries allowed as a share of calls over the last 10 s (at least RETRY_BUDGET_MIN_PER_S). */
  RETRY_BUDGET_RATIO: number;
  RETRY_BUDGET_MIN_PER_S: number;
  /** The longest the gateway holds a platform key's calls on one Retry-After, in seconds. */
  MAX_PLATFORM_PAUSE_S: number;
  /** Operation ids whose callers must send Idempotency-Key. */
  IDEMPOTENCY_REQUIRED: string[];
  /** OAuth dynamic client registration (RFC 7591), fleet-wide: `open` or `off` (docs/OAUTH.md). */
  OAUTH_REGISTRATION: 'open' | 'off';
  /** An OAuth access token's life, in seconds (at most an hour). */
  OAUTH_ACCESS_TOKEN_TTL_S: number;
  /** An OAuth refresh token's life, in seconds, from its grant or its last refresh. */
  OAUTH_REFRESH_TOKEN_TTL_S: number;
  /** Most OAuth clients registered at once, fleet-wide. */
  OAUTH_CLIENTS_MAX: number;
  /**
   * The usage export (docs/BILLING.md): one event per billable request (`events`), one per
   * tenant, token and operation a minute (`aggregate`), or none; it runs only with a sink
   * and the USAGE_EVENTS queue.
   */
  USAGE_EXPORT: 'events' | 'aggregate' | 'off';
  /** Where the consumer delivers batches of CloudEvents. */
  USAGE_SINK_URL?: string;
  /** Names the signing key in each batch's signature (X-Gateway-Signature `kid`). */
  USAGE_SINK_KEY_ID: string;
  /** HMAC-SHA256 key the batches are signed with (a secret); unset: unsigned. */
  USAGE_SINK_SECRET?: string;
  /** Sent as `Authorization: Bearer` (a secret): OpenMeter's API token. */
  USAGE_SINK_TOKEN?: string;
  /** The events' CloudEvents `source`. */
  USAGE_EVENT_SOURCE: string;
  /** The first retry's delay; each next one doubles, at most 300 s. */
  USAGE_RETRY_BASE_S: number;
}
