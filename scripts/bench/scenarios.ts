/**
 * What `npm run bench` measures on plain workerd: the Workers it starts, the
 * scenarios run against them (all interleaved round by round), and the
 * targets it checks. To add a measurement, add a scenario; a new set of
 * gateway vars is a new entry in WORKERS (one more workerd process).
 */

/** Where a scenario's requests go. */
export type WorkerId =
  | 'bare'
  | 'floor'
  | 'limits-on'
  | 'limits-on-aa'
  | 'limits-flat'
  | 'limits-off'
  | 'quiet'
  | 'small'
  | 'export-on'
  | 'export-off';

export type WorkerSpec =
  | { kind: 'bare'; label: string }
  | { kind: 'floor'; label: string }
  | { kind: 'gateway'; label: string; vars: Record<string, string> };

/** In a gateway's vars, replaced by the emulator's URL when the gateway starts. */
export const EMULATOR_URL = '{emulator}';

const HUGE = 1_000_000_000;
/** The flood's limit a second (gateway-flood), whose requests are sent at ten times it. */
export const FLOOD_LIMIT = 100;
const NEVER_REFUSED = JSON.stringify({
  policies: [
    { name: 'burst', limit: HUGE, window_s: 10 },
    { name: 'sustained', limit: HUGE, window_s: 60 },
  ],
  quota: { daily: HUGE, monthly: HUGE },
});

function usageExport(mode: 'events' | 'off'): Record<string, string> {
  return {
    LIMITS_ENABLED: 'true',
    DEFAULT_LIMITS: NEVER_REFUSED,
    USAGE_EXPORT: mode,
    USAGE_SINK_URL: `${EMULATOR_URL}/__emulator/usage/bench`,
    // The sink is on loopback, plain http; batches are signed as in production.
    WEBHOOK_LOCAL_TARGETS: 'allow',
    USAGE_SINK_SECRET: 'bench-usage-sink-secret-0123456789abcdef',
  };
}

export const WORKERS: Record<WorkerId, WorkerSpec> = {
  // The baseline: one route, a fixed platform key, fetch upstream, stream the body back.
  bare: { kind: 'bare', label: 'bare Worker' },
  // The second baseline (issue 48): what any safe gateway must do, ./floor-worker.ts.
  floor: { kind: 'floor', label: 'checking floor' },
  // The default limiter code path (same policies and quotas as the default
  // DEFAULT_LIMITS), with limits so high that the bench is never refused.
  'limits-on': {
    kind: 'gateway',
    label: 'gateway, limits on',
    vars: { LIMITS_ENABLED: 'true', DEFAULT_LIMITS: NEVER_REFUSED },
  },
  // limits-on again in a workerd process of its own: the A/A pair, how far two
  // measurements of one build differ in the same run.
  'limits-on-aa': {
    kind: 'gateway',
    label: 'gateway, limits on (A/A)',
    vars: { LIMITS_ENABLED: 'true', DEFAULT_LIMITS: NEVER_REFUSED },
  },
  // As limits-on, with isolates leasing from the TenantGuard itself, not a regional broker.
  'limits-flat': {
    kind: 'gateway',
    label: 'gateway, limits on, no brokers',
    vars: { LIMITS_ENABLED: 'true', DEFAULT_LIMITS: NEVER_REFUSED, LEASE_BROKERS: 'off' },
  },
  // As limits-on, without the per-request log line and the usage history.
  quiet: {
    kind: 'gateway',
    label: 'gateway, no logs/history',
    vars: {
      LIMITS_ENABLED: 'true',
      DEFAULT_LIMITS: NEVER_REFUSED,
      LOG_SAMPLE_RATE: '0',
      USAGE_HISTORY: 'off',
    },
  },
  // A small tenant, 100 requests a second (sliding), flooded at ten times that.
  small: {
    kind: 'gateway',
    label: 'gateway, 100/s limit',
    vars: {
      LIMITS_ENABLED: 'true',
      DEFAULT_LIMITS: JSON.stringify({
        policies: [{ name: 'burst', limit: FLOOD_LIMIT, window_s: 1 }],
        quota: {},
      }),
    },
  },
  // As limits-on, with the usage export on (docs/BILLING.md): each request is one message on
  // the queue, which the same Worker consumes, signs and delivers to the emulator's sink
  // (and archives in R2). Miniflare's queue broker runs in this workerd process too.
  'export-on': {
    kind: 'gateway',
    label: 'gateway, usage export on',
    vars: usageExport('events'),
  },
  // The same vars with USAGE_EXPORT=off: no message, no consumer.
  'export-off': {
    kind: 'gateway',
    label: 'gateway, usage export off',
    vars: usageExport('off'),
  },
  // No TenantGuard: no limits, no instant revocation.
  'limits-off': {
    kind: 'gateway',
    label: 'gateway, limits off',
    vars: { LIMITS_ENABLED: 'false' },
  },
};

export interface Scenario {
  name: string;
  worker: WorkerId;
  /**
   * Path and headers, and a body for a POST; `token` is the gateway token of the bench tenant
   * on that Worker ('' on the bare Worker).
   */
  request(token: string): { path: string; headers: Record<string, string>; body?: string };
  /**
   * What counts as success: this HTTP status and envelope code (default 200 and 0), or a body
   * whose start matches `head` (a RegExp source) where the answer is no envelope.
   */
  expect?: { status: number; code: number; head?: string };
  /** A refusal the scenario expects too, counted apart from successes and errors. */
  refused?: { status: number; code: number };
  /** Requests started at this rate a second instead of as fast as they are answered. */
  perSecond?: number;
  /** One line for the report. */
  what: string;
  /** The same requests to the same build in another process: this is the A/A twin of that scenario. */
  twinOf?: string;
}

const teamLists =
  (cacheControl?: string) =>
  (token: string): { path: string; headers: Record<string, string> } => ({
    path: '/team/lists',
    headers: {
      authorization: `Bearer ${token}`,
      ...(cacheControl ? { 'cache-control': cacheControl } : {}),
    },
  });

/**
 * An MCP 2026-07-28 `tools/call` of team.list: the same cached read as gateway-hit, or as
 * gateway-hit-small with `page_size` 1.
 */
const mcpTeamList =
  (args: Record<string, unknown> = {}) =>
  (token: string) => ({
    path: '/mcp',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'team.list',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'team.list',
        arguments: args,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  });

/** A result whose text is the data (a failure's text starts "Error"). */
const MCP_RESULT =
  '^\\{"jsonrpc":"2\\.0","id":1,"result":\\{"resultType":"complete","content":\\[\\{"type":"text","text":"\\{';

export const scenarios: Scenario[] = [
  {
    name: 'bare',
    worker: 'bare',
    request: () => ({ path: '/team/lists', headers: {} }),
    what: 'bare forwarding Worker: fetch the platform, stream the body back',
  },
  {
    name: 'floor',
    worker: 'floor',
    request: teamLists(),
    what:
      'checking floor: key from a fixed map by token, fetch, read the whole answer, parse its ' +
      'envelope code, the secret look (mayHoldSecrets), return the bytes',
  },
  {
    name: 'gateway-miss',
    worker: 'limits-on',
    request: teamLists('no-store'),
    what: 'GET /team/lists, Cache-Control: no-store: forwarded every time (limits on)',
  },
  {
    name: 'gateway-hit',
    worker: 'limits-on',
    request: teamLists(),
    what: 'GET /team/lists, cacheable: served from the read cache after the warm-up',
  },
  {
    name: 'mcp-hit',
    worker: 'limits-on',
    request: mcpTeamList(),
    expect: { status: 200, code: 0, head: MCP_RESULT },
    what: 'POST /mcp, tools/call team.list (MCP 2026-07-28): gateway-hit as an MCP tool call',
  },
  {
    name: 'gateway-hit-small',
    worker: 'limits-on',
    request: (token) => ({ ...teamLists()(token), path: '/team/lists?page_size=1' }),
    what: 'as gateway-hit with page_size=1: a 2.5 KB answer where gateway-hit has 23 KB',
  },
  {
    name: 'mcp-hit-small',
    worker: 'limits-on',
    request: mcpTeamList({ page_size: 1 }),
    expect: { status: 200, code: 0, head: MCP_RESULT },
    what: 'as mcp-hit with page_size 1: what an MCP call adds whatever its answer',
  },
  {
    name: 'gateway-404',
    worker: 'limits-on',
    request: () => ({ path: '/nowhere', headers: {} }),
    expect: { status: 404, code: 40400 },
    what: 'GET /nowhere: no route, no auth, no upstream',
  },
  {
    name: 'gateway-quiet',
    worker: 'quiet',
    request: teamLists('no-store'),
    what: 'as gateway-miss, without the request log line and usage history',
  },
  {
    name: 'gateway-hit-quiet',
    worker: 'quiet',
    request: teamLists(),
    what: 'as gateway-hit, without the request log line and usage history',
  },
  {
    name: 'gateway-flat',
    worker: 'limits-flat',
    request: teamLists('no-store'),
    what: 'as gateway-miss, with LEASE_BROKERS=off (isolates lease from the TenantGuard)',
  },
  {
    name: 'gateway-flood',
    worker: 'small',
    request: teamLists(),
    refused: { status: 429, code: 42900 },
    perSecond: 10 * FLOOD_LIMIT,
    what:
      'GET /team/lists at a tenant limited to 100 a second, sent at 1000 a second (ten times the limit): ' +
      'nine in ten refused (refusal leases: the guard is asked about once a second, not per refusal)',
  },
  {
    name: 'gateway-export',
    worker: 'export-on',
    request: teamLists('no-store'),
    what: 'as gateway-miss, with the usage export on: one queue message a request, consumed and delivered',
  },
  {
    name: 'gateway-export-off',
    worker: 'export-off',
    request: teamLists('no-store'),
    what: 'as gateway-export, with USAGE_EXPORT=off (its A/A twin: gateway-miss, no sink set)',
  },
  {
    name: 'gateway-limits-off',
    worker: 'limits-off',
    request: teamLists('no-store'),
    what: 'as gateway-miss, with LIMITS_ENABLED=false',
  },
  {
    name: 'gateway-miss-aa',
    worker: 'limits-on-aa',
    request: teamLists('no-store'),
    twinOf: 'gateway-miss',
    what: 'gateway-miss again, the same build in a second workerd process (A/A spread)',
  },
  {
    name: 'gateway-hit-aa',
    worker: 'limits-on-aa',
    request: teamLists(),
    twinOf: 'gateway-hit',
    what: 'gateway-hit again, the same build in a second workerd process (A/A spread)',
  },
];

/** Printed as PASS/FAIL lines; informational (the bench does not fail on them). */
export interface Target {
  label: string;
  scenario: string;
  vs: string;
  /** Throughput of `scenario` / throughput of `vs` must be at least this. */
  min: number;
}

/** A per-request count target: `count` / refused requests of `scenario` at most `max`. */
export interface RefusalTarget {
  label: string;
  scenario: string;
  count: 'guard_calls' | 'limit_refusals_asked';
  max: number;
}

/** Worker CPU per request of `scenario` / that of `vs` at most `max` (from /proc). */
export interface CpuTarget {
  label: string;
  scenario: string;
  vs: string;
  max: number;
  /**
   * `round` (default): the Worker's process during the scenario's rounds. `cycle`: from the
   * start of one of its rounds to the start of its next, so what the Worker does off the
   * request path while other scenarios run (a queue consumer, the usage flushes) counts
   * too; only for a Worker that serves no other scenario in the run.
   */
  measure?: 'round' | 'cycle';
}

export const cpuTargets: CpuTarget[] = [
  // Issue 48: against the checking floor, and the bare-ratio goals of issue 35.
  {
    label: 'miss ≤ 1.25 × the checking floor, Worker CPU',
    scenario: 'gateway-miss',
    vs: 'floor',
    max: 1.25,
  },
  { label: 'miss ≤ 1.8 × bare, Worker CPU', scenario: 'gateway-miss', vs: 'bare', max: 1.8 },
  { label: 'hit ≤ 0.5 × bare, Worker CPU', scenario: 'gateway-hit', vs: 'bare', max: 0.5 },
  { label: '404 ≤ 0.3 × bare, Worker CPU', scenario: 'gateway-404', vs: 'bare', max: 0.3 },
  {
    label: 'MCP tool call ≤ 1.3 × the same HTTP call, Worker CPU (cached read)',
    scenario: 'mcp-hit',
    vs: 'gateway-hit',
    max: 1.3,
  },
  {
    label: 'the same with a 2.5 KB answer (informational)',
    scenario: 'mcp-hit-small',
    vs: 'gateway-hit-small',
    max: 1.3,
  },
  // Issue 46's closing figure: what the usage export adds, all of it (producer, Miniflare's
  // queue broker, consumer, signing, R2 archive), next to the same Worker with it off.
  {
    label: 'usage export on / off ≤ 1.05, Worker CPU round to round (consumer included)',
    scenario: 'gateway-export',
    vs: 'gateway-export-off',
    max: 1.05,
    measure: 'cycle',
  },
  {
    label: 'the same within the rounds only (informational)',
    scenario: 'gateway-export',
    vs: 'gateway-export-off',
    max: 1.05,
  },
  // A/A: two Workers doing the same (no export), so the noise of the figure above.
  {
    label: 'A/A: export off / gateway-miss, round to round (informational: the noise)',
    scenario: 'gateway-export-off',
    vs: 'gateway-miss',
    max: 1.05,
    measure: 'cycle',
  },
];

export const refusalTargets: RefusalTarget[] = [
  {
    label: 'guard calls per refused request in the flood ≤ 0.05',
    scenario: 'gateway-flood',
    count: 'guard_calls',
    max: 0.05,
  },
];

export const targets: Target[] = [
  // The goal is at +20 ms upstream; at +0 ms every forwarding Worker is CPU-bound (informational).
  {
    label: 'miss throughput ≥ 0.95 × bare (goal at +20 ms)',
    scenario: 'gateway-miss',
    vs: 'bare',
    min: 0.95,
  },
  {
    label: 'miss throughput × the checking floor (informational)',
    scenario: 'gateway-miss',
    vs: 'floor',
    min: 0.95,
  },
  { label: 'gateway hit ≥ 1.5 × bare', scenario: 'gateway-hit', vs: 'bare', min: 1.5 },
  {
    label: 'limits on / off ≥ 0.95',
    scenario: 'gateway-miss',
    vs: 'gateway-limits-off',
    min: 0.95,
  },
  // What regional brokers cost on one machine, where they cannot save a long round trip.
  {
    label: 'brokers / no brokers (informational)',
    scenario: 'gateway-miss',
    vs: 'gateway-flat',
    min: 0.95,
  },
  {
    label: 'logs and history on / off ≥ 0.95',
    scenario: 'gateway-miss',
    vs: 'gateway-quiet',
    min: 0.95,
  },
  // Not an issue target: what the log line costs where the gateway does least.
  {
    label: 'logs and history on / off on hits (informational)',
    scenario: 'gateway-hit',
    vs: 'gateway-hit-quiet',
    min: 0.95,
  },
];
