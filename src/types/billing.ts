/**
 * The usage export's shapes (docs/BILLING.md): what a billable request puts on the
 * Queue, and the CloudEvent the consumer delivers for it. Types only.
 */

/** How a request came: a route, an MCP tool call, a session event stream. */
export type Via = 'http' | 'mcp' | 'ws';

/**
 * One billable request, as the request log produces it to the Queue: compact, since
 * every billable request makes one; the consumer makes the CloudEvent from it.
 */
export interface UsageRecord {
  /** The event id: the request id, unless the caller chose it (then with a suffix). */
  id: string;
  /** The request id the caller saw (X-Request-ID). */
  rid: string;
  /** When the request started, ms. */
  at: number;
  tenant: string;
  token: string;
  /** The OAuth client (the app) whose grant the token came from, when it did. */
  client?: string;
  /** The operation id (`team.list`, …). */
  op: string;
  /** The plan the tenant is on, as its TenantGuard last said (null: none). */
  plan: string | null;
  status: number;
  /** Units the request cost (its route's cost, ROUTE_OVERRIDES applied). */
  cost: number;
  /** Duration in the gateway, ms. */
  ms: number;
  /** Bytes of the answer's body (0 for a stream or an answer the gateway made). */
  bytes: number;
  /** The read cache: `HIT`, `L1`, `STALE`, `MISS`, `BYPASS`; null: not a cached read. */
  cache: string | null;
  via: Via;
}

/**
 * One tenant, token and operation over one minute (aggregate mode), as the TenantGuard
 * produces it: `rev` is 0 for the minute's first event, higher for requests that arrived
 * after it went (docs/BILLING.md, "Aggregate mode").
 */
export interface UsageAggregate {
  kind: 'aggregate';
  tenant: string;
  token: string;
  op: string;
  /** The minute's start, ms. */
  minute: number;
  rev: number;
  plan: string | null;
  requests: number;
  cost: number;
  bytes: number;
  ms: number;
  errors: number;
}

/**
 * An isolate's records of the moment in one queue message (observability/usage-event-batch.ts):
 * one message, not one each, so the queue and its consumer handle a message per batch.
 */
export interface UsagePack {
  kind: 'pack';
  records: UsageRecord[];
}

export type UsageMessage = UsageRecord | UsageAggregate | UsagePack;

/** A CloudEvents 1.0 event in the JSON format, as the sink receives it (docs/BILLING.md). */
export interface UsageCloudEvent {
  specversion: '1.0';
  id: string;
  source: string;
  type: string;
  /** The tenant id: the customer a meter bills. */
  subject: string;
  /** ISO 8601: when the request started (the minute's start, aggregated). */
  time: string;
  datacontenttype: 'application/json';
  data: Record<string, string | number | null>;
}
