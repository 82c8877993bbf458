/**
 * What the gateway's own JSON APIs answer (the `data` of their envelopes): the
 * operator API, and a token's own routes (`GET /token`, `GET /usage`). Shapes
 * only. The handlers and the Durable Objects that make these answers are typed
 * with them, and the console and partner portal (ui/) import them type-only,
 * so a change to a shape here breaks whichever side no longer fits it
 * (`npm run typecheck` checks ui/ too).
 */
import type { Limits, OperatorRole, RatePolicy, TokenLimits } from './settings';
import type { ListedTenant, PublicTenant, TokenRecord } from './tenants';

export type { Limits, ListedTenant, PublicTenant, RatePolicy, TokenLimits };

/** Every answer: the platform's envelope; `code` 0 is success (docs/ERRORS.md). */
export interface Envelope<T> {
  code: number;
  msg: string;
  data: T;
}

/** Where a rejected value came from, as the caller sees it. */
export type InputLocation = 'path' | 'query' | 'body';

export interface FieldError {
  location: InputLocation;
  field: string;
  message: string;
  /** Allowed values, where a field must be one of a known set. */
  allowed?: string[];
}

/**
 * An error envelope's `data`: the request id, and the details its code names
 * (`errors` for validation, `policy` and `retry_after_s` for 429s, …; docs/ERRORS.md).
 */
export interface ErrorData {
  request_id: string;
  errors?: FieldError[];
  [detail: string]: unknown;
}

/** An operator: an Access email (or service token name) or `admin-token`, and its role. */
export interface Operator {
  actor: string;
  role: OperatorRole;
  via: 'access' | 'admin-token';
}

/** GET /admin/whoami: who is calling, and the settings the console's forms explain. */
export interface Whoami extends Operator {
  settings: {
    /** WEBHOOK_LOCAL_TARGETS=allow: webhooks may go to http:// and private addresses (development). */
    webhook_local_targets: boolean;
  };
}

/** GET /admin/tenants: a page, and where the next one starts (null: none). */
export interface TenantPage {
  tenants: ListedTenant[];
  cursor: string | null;
}

/** POST /admin/tenants: the tenant and its first token, shown once. */
export interface CreatedTenant {
  tenant_id: string;
  token_id: string;
  token: string;
  scopes: string[];
  expires_at: string | null;
  limits: TokenLimits | null;
  /** The plan it is on (null: none). */
  plan: string | null;
}

/** A meter's state as RateLimit fields and the usage endpoints show it. */
export interface MeterState {
  name: string;
  kind: 'rate' | 'quota';
  limit: number;
  window_s: number;
  /**
   * Units admitted requests spent (the TenantGuard's views); what a RateLimit view counts
   * as gone (limit − remaining) where `reserved` is absent.
   */
  used: number;
  /**
   * The TenantGuard's views: units counted beyond `used`, leased to isolates and regional
   * brokers and not yet spent or given back (docs/LIMITS.md, "Counting").
   */
  reserved?: number;
  remaining: number;
  /** Seconds until the current count has drained. */
  reset_s: number;
}

/** Calls the TenantGuard has answered, by kind (shown by the usage endpoint and the bench). */
export interface GuardCalls {
  /** Calls that carried a waiting request (leased mode). */
  acquires: number;
  /** Background renewals. */
  renewals: number;
  /** Calls for exact-mode tenants: one per request. */
  exact_admits: number;
  /** Calls isolates made to the tenant's regional brokers (objects/broker/), as they reported. */
  broker_acquires: number;
  broker_renewals: number;
}

/** GET /admin/tenants/{id}/usage: the limits in force, and what remains of each meter now. */
export interface TenantUsage {
  limits: Limits;
  /** The tenant has limits of its own (they replace its plan's, or the defaults). */
  custom: boolean;
  /** The plan the tenant is on (its limits count unless `custom`), or null. */
  plan: string | null;
  meters: MeterState[];
  guard_calls: GuardCalls;
  /** With `token_id`: that token's own limits (null: none). */
  token_limits?: TokenLimits | null;
}

/** A token as the operator API lists it (never the secret, nor its hash). */
export type ListedToken = TokenRecord & {
  /** The first token of its rotation line (itself when never rotated). */
  family_id: string;
  ancestor_id: string | null;
  successor_id: string | null;
  /** When and by whom this token was rotated into its successor. */
  rotated_at: string | null;
  rotated_by: string | null;
};

/** GET /admin/tenants/{id}/tokens: each token with its own limits and its last use. */
export type TokenListing = ListedToken & {
  limits: TokenLimits | null;
  /** The start of the last hour it made a request in (usage history); null: none kept. */
  last_used_at: string | null;
};

/** POST .../tokens: the token once, beside its record. */
export type IssuedToken = TokenRecord & { limits: TokenLimits | null; token: string };

/** POST .../tokens/{token_id}/rotate and POST /token/rotate: the successor, shown once. */
export type RotatedToken = TokenRecord & {
  token: string;
  old_token: { id: string; expires_at: string };
};

/** DELETE .../tokens/{token_id}. */
export interface RevokedToken {
  token_id: string;
  revoked: true;
  successors_revoked: string[];
}

/** POST .../portal-links: the link once (its token rides in the fragment). */
export interface PortalLink {
  url: string;
  token_id: string;
  scopes: string[];
  expires_at: string;
}

/**
 * POST /admin/keys/check and POST /admin/tenants/{id}/key/check: what the platform
 * answered one cheap read made with the key (never the key itself).
 */
export interface KeyCheck {
  /**
   * `valid`: a success envelope; `unauthorized`: 401 or 403; `unreachable`: no answer
   * (refused, reset, or none within the check's deadline); `error`: any other answer.
   */
  result: 'valid' | 'unauthorized' | 'unreachable' | 'error';
  /** The platform's HTTP status (null: none). */
  status: number | null;
  /** The platform's envelope code, where its answer had one. */
  code: number | null;
  /** The operation the check called (`calls.filter_values`). */
  operation: string;
  ms: number;
}

/**
 * One recent request, as its TenantGuard keeps it (GET /admin/tenants/{id}/requests,
 * GET /usage/requests): ids, codes and timings, never a body, query or secret.
 */
export interface RecentRequest {
  request_id: string;
  at: string;
  token_id: string;
  /** The operation id (`team.list`), or what else answered (`usage`, `unmatched`, …). */
  operation: string;
  method: string;
  status: number;
  /** The envelope code answered (0: success; a platform's own code passes through). */
  code: number | null;
  /** What the limiter did (`admitted`, `refused`, `unavailable`); null: not asked. */
  limiter: string | null;
  /** The rate policy or quota that refused it. */
  policy: string | null;
  /** The read cache: HIT, MISS, STALE, BYPASS or L1. */
  cache: string | null;
  upstream_status: number | null;
  upstream_attempts: number | null;
  latency_ms: number;
  upstream_ms: number | null;
  trace_id: string | null;
  /** `mcp`: an MCP tool call (the operation is the tool); null: a plain HTTP call. */
  via: 'mcp' | null;
  /** Why it was refused or failed, in words (null for a success). */
  reason: string | null;
}

/** A page of recent requests, newest first; `cursor` asks for the next (older) page. */
export interface RecentRequestPage {
  requests: RecentRequest[];
  cursor: string | null;
  /** What the log keeps: the newest of each kind, and how long. */
  kept: { per_kind: number; hours: number };
}

/** A tenant's figures over the overview's hours (GET /admin/overview). */
export interface FleetTenant {
  tenant_id: string;
  /** Its name now (null: no longer a tenant). */
  name: string | null;
  requests: number;
  /** Refused by a rate policy or quota (429). */
  refused: number;
  /** Answered 5xx (the platform's refusals of its key included: 502). */
  errors_5xx: number;
  /** The platform refused its platform key (401 or 403). */
  key_rejected: number;
  /** Self-service requests (never billed), apart from `requests`, which are data requests. */
  self_service: number;
  /** The platform's status of the last such refusal, and its hour. */
  key_status: number | null;
  key_at: string | null;
}

/** GET /admin/overview: the last hours across tenants, from the fleet boards. */
export interface Overview {
  since: string;
  hours: number;
  /** Tenants with traffic in those hours. */
  tenants: number;
  totals: {
    requests: number;
    refused: number;
    errors_5xx: number;
    key_rejected: number;
    self_service: number;
  };
  top_requests: FleetTenant[];
  top_refused: FleetTenant[];
  top_errors: FleetTenant[];
  /** Every tenant whose platform key the platform refused (up to the limit), most refusals first. */
  key_rejected: FleetTenant[];
  /** How the figures were gathered: board shards asked, how long it took. */
  shards: number;
  ms: number;
}

/** The figures of the fleet's series, and of a tenant's share of an hour. */
export type FleetFigure = 'requests' | 'errors_4xx' | 'errors_5xx' | 'refused';

/** One hour across tenants (GET /admin/overview/series). */
export type FleetPoint = Record<FleetFigure, number> & {
  /** The hour's start. */
  t: string;
  /**
   * Upper bound of the latency bucket of the median and the 95th percentile (ms), from
   * the tenants' histograms added up; null without requests, or above 10 s.
   */
  p50_ms: number | null;
  p95_ms: number | null;
  /**
   * The tenants with the most of each figure in this hour (at most 5, most first): the
   * index of each in `tenants`, and its count.
   */
  top: Record<FleetFigure, [number, number][]>;
};

/** GET /admin/overview/series: the fleet by hour, from the fleet boards. */
export interface FleetSeries {
  /** The first hour's start; the points follow hour by hour, the running one last. */
  from: string;
  hours: number;
  points: FleetPoint[];
  /**
   * The tenants the points' tops name, those of the newest hours first; a name for the
   * first 200 (null: beyond them, or deleted).
   */
  tenants: { tenant_id: string; name: string | null }[];
  shards: number;
  ms: number;
}

/** A plan: named limits tenants are on (PUT /admin/plans/{name}, GET /admin/plans). */
export interface Plan {
  name: string;
  limits: Limits;
  /** The plan book's decision number of its last change. */
  version: number;
  updated_at: string;
  updated_by: string;
  /** Tenants on it. */
  tenants: number;
  /** Tenants whose TenantGuard has not taken its last change yet (retried). */
  pending: number;
}

/** One bucket of the usage history, per group asked for. */
export interface SeriesPoint {
  /** Start of the hour or UTC day. */
  t: string;
  route?: string;
  status?: string;
  token?: string;
  requests: number;
  units: number;
  /**
   * Upper bound of the latency bucket holding the median and the 95th percentile (ms); null above
   * 10 s.
   */
  p50_ms: number | null;
  p95_ms: number | null;
  /** Reads answered from the read cache, and reads that looked in it (cached operations only). */
  cache_hits: number;
  cache_lookups: number;
  /**
   * Billable requests (admitted data requests, docs/BILLING.md): what the usage export
   * sends, one event each. `units` are theirs.
   */
  billable: number;
  /** Self-service requests (the portal's, a token's own view and rotation, MCP discovery): never billed. */
  self_service: number;
}

export interface RefusalPoint {
  t: string;
  policy: string;
  token?: string;
  count: number;
}

export interface History {
  series: SeriesPoint[];
  refusals: RefusalPoint[];
}

/** GET /admin/tenants/{id}/analytics. */
export interface Analytics extends History {
  tenant_id: string;
  from: string;
  to: string;
  granularity: 'hour' | 'day';
  group_by: ('route' | 'status' | 'token')[];
}

/** The quota alert webhook, without its signing secret (GET .../alerts). */
export interface AlertSettings {
  url: string;
  /** Quota thresholds, percents of a quota's limit. */
  thresholds: number[];
  /** An hour whose server errors reach this share of its requests raises an alert (percent). */
  server_error_percent: number;
}

/** PUT .../alerts: the webhook, and its signing secret once. */
export type AlertSet = AlertSettings & { secret: string };

/** A quota crossed a threshold (percent of its limit). */
export interface QuotaAlert {
  kind: 'quota';
  tenant_id: string;
  policy: string;
  threshold: number;
  used: number;
  limit: number;
  period_end: string;
  sent_at: string;
}

/** The platform refused the tenant's platform key (401 or 403) in this hour. */
export interface KeyRejectedAlert {
  kind: 'platform_key_rejected';
  tenant_id: string;
  upstream_status: number;
  /** Refusals of the key in the hour so far, when the alert was raised. */
  count: number;
  period_start: string;
  period_end: string;
  sent_at: string;
}

/** Server errors (5xx other than the key's refusals) were `share_percent` of the hour's requests. */
export interface ServerErrorsAlert {
  kind: 'server_errors';
  tenant_id: string;
  threshold: number;
  share_percent: number;
  errors: number;
  requests: number;
  period_start: string;
  period_end: string;
  sent_at: string;
}

export type AlertPayload = QuotaAlert | KeyRejectedAlert | ServerErrorsAlert;

/** One alert the TenantGuard raised, and what became of its delivery (GET .../alerts/recent). */
export interface RecentAlert {
  id: number;
  at: string;
  /** `no_webhook`: raised while no webhook was set (the console shows it all the same). */
  delivery: 'pending' | 'delivered' | 'failed' | 'no_webhook';
  alert: AlertPayload;
}

/** POST .../alerts/test. */
export interface AlertTest {
  delivered: boolean;
  /** The receiver's HTTP status; null when it gave none. */
  status: number | null;
  /**
   * Why there is no status: `timeout` (no answer within 10 s), `unreachable` (no
   * connection: refused, reset, no such host), `secret_unavailable` (the signing
   * secret's key left KEY_ENCRYPTION_KEY: set the webhook again).
   */
  failure: 'timeout' | 'unreachable' | 'secret_unavailable' | null;
  /** How long the delivery took, in ms. */
  ms: number;
}

/** One audit log entry. */
export interface AuditEntry {
  id: number;
  at: string;
  action: string;
  tenant_id: string | null;
  token_id: string | null;
  request_id: string;
  /** Who did it: an Access email (or service token name), or `admin-token`. */
  actor: string;
  /** From where: the client IP and the Cloudflare data center (colo), when known. */
  ip: string | null;
  colo: string | null;
  detail: Record<string, unknown>;
}

/** GET /admin/audit: newest first, in the platform's paged wrapper shape. */
export interface AuditPage {
  page_num: number;
  page_size: number;
  total: number;
  total_page: number;
  data: AuditEntry[];
}

/** GET /admin/operations: what the gateway serves, and the scopes and presets it grants. */
export interface Operations {
  operations: {
    id: string;
    method: string;
    path: string;
    upstream_path: string;
    credential: string;
    group: string;
    scope: string;
    cost: number;
    cache: { ttl_s: number; grace_s: number; stale_if_error_s?: number } | null;
    timeout_ms: number;
    declared: boolean;
  }[];
  groups: readonly string[];
  /** The groups a tenant's limits may give quotas of their own (the built-in ones). */
  quota_groups: readonly string[];
  scopes: readonly string[];
  presets: readonly string[];
}

/** GET /token: a token's own view of itself and its tenant. */
export interface OwnToken {
  tenant: { id: string; name: string };
  token: {
    id: string;
    name: string;
    prefix: string;
    last4: string;
    scopes: string[];
    created_at: string | null;
    expires_at: string | null;
    browser: boolean;
  };
  /** The token's own limits (null: none, or a browser token). */
  limits: TokenLimits | null;
  /** The tenant's meters and the token's own, as the TenantGuard counts them now. */
  meters: MeterState[];
  can_rotate: boolean;
}

/** GET /usage: a tenant's own usage, for its partner. */
export interface OwnUsage {
  tenant_id: string;
  limits: Limits;
  meters: MeterState[];
  /** The last 30 UTC days, by day, and the refusals of those days by policy. */
  days: SeriesPoint[];
  refusals: RefusalPoint[];
  /** The last 48 hours (this one included), by hour, and their refusals by policy. */
  hours: SeriesPoint[];
  hourly_refusals: RefusalPoint[];
  /** The same two ranges' refusals by the operation refused, most first. */
  refusals_by_operation: {
    days: { operation: string; count: number }[];
    hours: { operation: string; count: number }[];
  };
}

/** What one change of a fleet file's plan does to one field (no secret: a key shows its fingerprint). */
export interface ConfigFieldChange {
  field: string;
  before: unknown;
  after: unknown;
}

/** One change of a fleet file's plan (docs/CONFIG-AS-CODE.md), in the order it is applied. */
export interface ConfigChange {
  op: 'rename' | 'create' | 'update' | 'delete';
  kind: 'plan' | 'tenant' | 'token';
  ref: string;
  /** A token's tenant, by its ref; null for plans and tenants. */
  tenant_ref: string | null;
  /** The live object: a tenant or token id, a plan's name; null until it is created. */
  id: string | null;
  name: string;
  fields: ConfigFieldChange[];
  /**
   * A token created from a sealed backup: `restored` (its record, so its secret works as
   * before) or `reissued` (a new secret: this gateway cannot check the old one; `note` says why).
   */
  source: 'restored' | 'reissued' | null;
  note: string | null;
}

/** POST /admin/config/plan: what sync (or apply) would change, and the hash an apply must name. */
export interface ConfigPlan {
  hash: string;
  changes: ConfigChange[];
  counts: { rename: number; create: number; update: number; delete: number };
  /** What was not compared (a platform key whose variable the CLI did not have), and why. */
  warnings: string[];
}

/** A secret made by an apply, shown once: a new token, or a new alert webhook's signing secret. */
export interface ConfigSecret {
  kind: 'token' | 'webhook';
  tenant_ref: string;
  /** The token's ref (null for a webhook secret). */
  ref: string | null;
  id: string | null;
  secret: string;
}

/** POST /admin/config/apply: every change of the plan, applied. */
export interface ConfigApplied {
  hash: string;
  applied: ConfigChange[];
  secrets: ConfigSecret[];
}

/** An apply as the ConfigBook keeps it: who, when, which plan, how far it went. */
export interface ConfigApplyRecord {
  hash: string;
  at: string;
  actor: string;
  request_id: string;
  changes: number;
  applied: number;
  complete: boolean;
}

/** An OAuth client registered with the gateway (docs/OAUTH.md, "Clients"). */
export interface OAuthClient {
  client_id: string;
  client_name: string;
  redirect_uris: string[];
  /** `dynamic`: registered by itself (RFC 7591); `operator`: by `POST /admin/oauth/clients`. */
  kind: 'dynamic' | 'operator';
  /** The operator who registered it; null for a dynamic one. */
  created_by: string | null;
  created_at: string;
  last_used_at: string | null;
  /** Whether some partner has approved it (an unapproved dynamic client goes after a day). */
  approved: boolean;
}

/** GET /admin/oauth/clients: a page, newest first, and where the next starts. */
export interface OAuthClientPage {
  clients: OAuthClient[];
  cursor: string | null;
}

/**
 * What an operator lets a tenant's partner grant (docs/OAUTH.md, "Settings"): to apps
 * through OAuth consent, and to its own keys in the portal.
 */
export interface PartnerAccess {
  /** The most any grant or partner key may hold: scope names, presets by name. */
  grantable_scopes: string[];
  /** Whether apps that registered themselves (RFC 7591) may be approved for this tenant. */
  dynamic_clients: boolean;
  /** Most working keys a partner may have made at once. */
  max_keys: number;
  /** Own limits each new grant gets (null: the tenant's limits alone). */
  grant_limits: TokenLimits | null;
}

/** An app a partner approved, as the portal lists it (GET /partner/apps). */
export interface PartnerApp {
  /** The grant's token id: revoking it ends the grant. */
  id: string;
  client_id: string;
  client_name: string;
  redirect_host: string;
  scopes: string[];
  /** The resource it was granted for (RFC 8707); '' for every resource of the gateway. */
  resource: string;
  granted_by: string;
  created_at: string;
  /** When the app last refreshed or was granted; its refresh token ends at `refresh_until`. */
  refresh_until: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** A partner's own key, as the portal lists it (GET /partner/keys): fields of its token's record. */
export type PartnerKey = Pick<
  TokenRecord,
  'id' | 'name' | 'prefix' | 'last4' | 'scopes' | 'created_at' | 'expires_at'
> & {
  revoked_at: string | null;
  made_by: string;
  limits: TokenLimits | null;
  last_used_at: string | null;
};

/** GET /oauth/consent: an app's authorization request, as the portal's consent page shows it. */
export interface ConsentView {
  /** The signed-in partner's tenant: the grant would be its. */
  tenant: { id: string; name: string };
  client: { id: string; name: string; kind: 'dynamic' | 'operator' };
  redirect_uri: string;
  /** Where the partner's answer goes: the redirect URI's host (or its scheme, for an app). */
  redirect_host: string;
  /** The resource it asks for (RFC 8707); '' for every resource of the gateway (API and MCP). */
  resource: string;
  /** The scope names the app asked for, as it sent them (presets by name). */
  scopes_asked: string[];
  /** What the partner may grant of them (presets expanded), all checked at first. */
  scopes_offered: string[];
  /** What the app asked for that the operator does not let this tenant grant. */
  scopes_withheld: string[];
  /** Why nothing can be approved (the tenant refuses such apps, or no scope is left); null: it can. */
  refusal: string | null;
  /** When the request ends: the partner answers before it. */
  expires_at: string;
}

/** POST /oauth/consent: where the page sends the partner with its answer. */
export interface ConsentAnswer {
  redirect_to: string;
}

/** POST /partner/keys: the new key, and its secret once. */
export type CreatedPartnerKey = PartnerKey & { token: string };

/** GET /partner/keys: the partner's keys, and what it may make. */
export interface PartnerKeys {
  keys: PartnerKey[];
  /** Most working keys at once (the operator's setting). */
  max_keys: number;
  /** The most a key may hold (scope names, presets by name). */
  grantable_scopes: string[];
}
/** One UTC day of a tenant's usage export (docs/BILLING.md, "Reconciliation"). */
export interface ExportDay {
  /** The UTC day, YYYY-MM-DD. */
  day: string;
  /** Billable requests the usage history counted: what the export owes. */
  billable: number;
  /** Events the sink accepted, as the consumer reported them. */
  delivered: number;
  /** Events dead-lettered after the retries, not yet re-sent by a replay. */
  dead: number;
  /** Events re-sent by replays (repeated ids at the sink). */
  replayed: number;
  /** billable − delivered − dead: produced and not yet delivered (queued, retrying). */
  backlog: number;
  /** How long the oldest event of the last delivered batch waited for it, ms. */
  lag_ms: number | null;
  last_delivered_at: string | null;
  /** With `archive=true`: the events the archive holds for the day, delivered and dead. */
  archived?: { delivered: number; dead: number };
}

/** GET /admin/tenants/{id}/usage/export: the export's state, by day, newest first. */
export interface ExportStatus {
  tenant_id: string;
  /** The export's mode (`events`, `aggregate`) and whether a sink is set. */
  mode: 'events' | 'aggregate' | 'off';
  sink: boolean;
  days: ExportDay[];
}

/** POST /admin/tenants/{id}/usage/replay: one step of a replay. */
export interface ReplayStep {
  tenant_id: string;
  /** Events sent to the sink in this step (their own ids: repeated ones for the sink). */
  sent: number;
  /** Archived batches read. */
  batches: number;
  /** Dead-lettered events among them, now delivered. */
  recovered: number;
  /** Where the next step starts; null: the range is done. */
  cursor: string | null;
}
