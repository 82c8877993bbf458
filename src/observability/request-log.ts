/**
 * One structured log line per request, written after the response, plus an
 * Analytics Engine data point and the tenant's usage history. Built here, at the
 * end, from what each step left on the context (types/outcomes.ts): the operation,
 * the trace, the limiter's verdict, the Idempotency-Key's claim, the platform call's
 * outcome, an error answer's code. Nothing here adds I/O on the request path
 * (docs/OBSERVABILITY.md, "One log line per request").
 *
 * @example app.use(requestLog())
 */
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { GatewayError } from '../errors';
import { isolateAdmission } from '../limits/admission';
import { recordRequestUsage } from '../limits/request';
import { log } from '../log';
import { isBillable, isSelfService } from '../metering/billable';
import { statusClass } from '../metering/usage';
import type { HonoEnv } from '../types/context';
import type { ForwardOutcome } from '../types/outcomes';
import { rejectedKeyStatus } from '../upstream/normalize';
import { exportMode, produceUsageEvent } from './usage-event';
import { toolCallOf, wasHandedOn } from './via';

export function requestLog() {
  return createMiddleware<HonoEnv>(async function requestLog(c, next) {
    const started = Date.now();
    const tool = toolCallOf(c.req.raw) ?? null;
    await next();
    // An MCP tool call's own request wrote the line (observability/via.ts).
    if (wasHandedOn(c)) return;
    const duration = Date.now() - started;
    const line = logLine(c, duration, tool);
    const settings = c.get('settings');
    if (line.status >= 400 || Math.random() < settings.LOG_SAMPLE_RATE) {
      if (line.status >= 500) log.error('request', line);
      else log.info('request', line);
    }
    writeDataPoint(c, line);
    // Every request a known token made, refused ones too, in its tenant's history and
    // recent requests (handed over with the usage batch, never on the request path).
    const principal = c.get('principal');
    if (principal) {
      // An unknown path under a valid token names no operation.
      const operation = line.route ?? 'unmatched';
      const limiter = c.get('limiter');
      const billable = isBillable(operation, limiter, c.get('forwarded') !== undefined);
      const admitted = limiter?.result === 'admitted';
      // A billable request is one usage event for the export (docs/BILLING.md) as it is one
      // in the history: both or neither (the history is kept with limits on).
      const keeps = settings.LIMITS_ENABLED && settings.USAGE_HISTORY;
      const exported = billable && keeps ? exportMode(c.env, settings) : null;
      const cost = line.cost ?? 0;
      const bytes = answeredBy(c)?.answer?.body.byteLength ?? 0;
      recordRequestUsage(c, principal.tenantId, {
        at: started,
        tokenId: principal.tokenId,
        operation,
        status: line.status,
        // Units of data spent: a self-service request spends its own meter's only.
        units: billable ? (limiter?.cost ?? 0) : 0,
        billable,
        selfService: isSelfService(operation),
        ...(admitted && limiter.charges
          ? { spent: { units: limiter.cost, charges: limiter.charges } }
          : {}),
        ...(exported === 'aggregate' ? { sums: { cost, bytes } } : {}),
        latencyMs: duration,
        refusedBy: limiter?.refusedBy,
        cache: cacheLookup(line.cache),
        keyRejected: keyRejection(c),
        request: {
          request_id: line.request_id,
          at: started,
          token_id: principal.tokenId,
          operation,
          method: line.method,
          status: line.status,
          code: line.code,
          limiter: limiter?.result ?? null,
          policy: limiter?.refusedBy ?? null,
          cache: line.cache,
          upstream_status: line.upstream_status,
          upstream_attempts: line.upstream_attempts,
          latency_ms: duration,
          upstream_ms: line.upstream_ms,
          trace_id: line.trace_id,
          via: line.via,
        },
      });
      if (exported === 'events' && c.env.USAGE_EVENTS) {
        produceUsageEvent(c, c.env.USAGE_EVENTS, {
          at: started,
          tenant: principal.tenantId,
          token: principal.tokenId,
          client: c.get('token')?.grant?.client_id,
          op: operation,
          plan: isolateAdmission.planOf(principal.tenantId),
          status: line.status,
          cost,
          ms: duration,
          bytes,
          cache: line.cache,
          mcp: tool !== null,
        });
      }
    }
  });
}

type LogLine = ReturnType<typeof logLine>;

function logLine(c: Context<HonoEnv>, duration: number, tool: string | null) {
  const status = c.res.status;
  const forwarded = c.get('forwarded');
  const answered = answeredBy(c, forwarded);
  const limiter = c.get('limiter');
  const cf = c.req.raw.cf;
  return {
    request_id: c.get('requestId'),
    trace_id: c.get('trace')?.traceId ?? null,
    tenant_id: c.get('tenant')?.id ?? c.get('principal')?.tenantId ?? null,
    // The token's id, never the token (also of a token refused after it was found).
    token_id: c.get('token')?.id ?? c.get('principal')?.tokenId ?? null,
    // The operation id, under the field name dashboards already read (docs/OBSERVABILITY.md).
    route: c.get('operationId') ?? null,
    method: c.req.method,
    status,
    code: answerCode(c, status, answered),
    upstream_status: forwarded?.upstreamStatus ?? upstreamStatusOf(c.error),
    // A fresh hit from memory is told apart; a stale answer says STALE from either tier.
    cache: answered
      ? answered.tier === 'L1' && answered.cache === 'HIT'
        ? 'L1'
        : (answered.cache ?? null)
      : null,
    // Why a stale entry answered: the platform failed (stale-if-error).
    stale_reason: answered?.staleReason ?? null,
    upstream_attempts: forwarded?.attempts || null,
    idempotency: c.get('idempotency')?.kind ?? null,
    limiter: limiter?.refusedBy
      ? `${limiter.result}:${limiter.refusedBy}`
      : (limiter?.result ?? null),
    cost: limiter?.cost ?? null,
    duration_ms: duration,
    upstream_ms: forwarded?.upstreamMs ?? null,
    colo: typeof cf?.colo === 'string' ? cf.colo : null,
    // A tool call of the MCP front door (observability/via.ts): how it came, and which tool.
    via: tool ? ('mcp' as const) : null,
    tool,
  };
}

/** The platform call's outcome, when its answer is what the caller got (no error). */
function answeredBy(c: Context<HonoEnv>, forwarded = c.get('forwarded')): ForwardOutcome | null {
  return !c.error && forwarded?.answer ? forwarded : null;
}

/** The answer's envelope code: an error's, the platform's, a replay's; 0 for another success. */
function answerCode(
  c: Context<HonoEnv>,
  status: number,
  answered: ForwardOutcome | null,
): number | null {
  if (c.error instanceof GatewayError) return c.error.code;
  const errorCode = c.get('errorCode');
  if (errorCode !== undefined) return errorCode;
  if (answered?.answer) return answered.answer.envelope?.code ?? 0;
  const claim = c.get('idempotency');
  if (claim?.kind === 'replay' && claim.answer.code !== null) return claim.answer.code;
  return status < 400 ? 0 : null;
}

/**
 * One Analytics Engine point per request, when the ANALYTICS binding is there
 * (docs/ANALYTICS.md has the layout and queries).
 */
function writeDataPoint(c: Context<HonoEnv>, line: LogLine): void {
  const dataset = c.env.ANALYTICS;
  if (!dataset) return;
  dataset.writeDataPoint({
    indexes: [line.tenant_id ?? 'none'],
    blobs: [
      line.route ?? 'none',
      statusClass(line.status),
      String(line.code ?? ''),
      line.cache ?? 'none',
      line.token_id ?? 'none',
      line.trace_id ?? 'none',
    ],
    doubles: [
      line.duration_ms,
      line.upstream_ms ?? 0,
      line.cost ?? 0,
      answeredBy(c)?.answer?.body.byteLength ?? 0,
    ],
  });
}

/** The platform's status an upstream failure carries, if any. */
function upstreamStatusOf(error: unknown): number | null {
  if (!(error instanceof GatewayError)) return null;
  const status = error.details.upstream_status;
  return typeof status === 'number' ? status : null;
}

/**
 * The platform's refusal of the tenant's key (its 401 or 403), for the key's health: the
 * platform call's verdict, or where there was none (the session event stream), the error's.
 */
function keyRejection(c: Context<HonoEnv>): number | undefined {
  const forwarded = c.get('forwarded');
  return forwarded ? forwarded.keyRejected : rejectedKeyStatus(c.error);
}

/** A cached read's outcome for the usage history: BYPASS (no-store) did not look. */
function cacheLookup(cache: LogLine['cache']): 'hit' | 'miss' | undefined {
  if (cache === 'MISS') return 'miss';
  if (cache === 'HIT' || cache === 'STALE' || cache === 'L1') return 'hit';
  return undefined;
}
