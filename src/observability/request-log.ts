/**
 * One structured log line per request, written after the response, plus an
 * Analytics Engine data point and the tenant's usage history. Each part of
 * the pipeline notes what it did in the request's Observation; nothing here
 * adds I/O on the request path (docs/OBSERVABILITY.md, "One log line per request").
 *
 * @example app.use(requestLog())
 */
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { GatewayError } from '../errors';
import { recordRequestUsage } from '../limits/request';
import { log } from '../log';
import { statusClass } from '../metering/usage';
import type { HonoEnv, Observation } from '../types/context';
import { toolCallOf, wasHandedOn } from './via';

export function requestLog() {
  return createMiddleware<HonoEnv>(async function requestLog(c, next) {
    const started = Date.now();
    const obs: Observation = {};
    c.set('obs', obs);
    const tool = toolCallOf(c.req.raw);
    await next();
    // An MCP tool call's own request wrote the line (observability/via.ts).
    if (wasHandedOn(c)) return;
    const duration = Date.now() - started;
    const line = {
      ...logLine(c, obs, duration),
      via: tool ? ('mcp' as const) : null,
      tool: tool ?? null,
    };
    const settings = c.get('settings');
    if (line.status >= 400 || Math.random() < settings.LOG_SAMPLE_RATE) {
      if (line.status >= 500) log.error('request', line);
      else log.info('request', line);
    }
    writeDataPoint(c, line, obs);
    // Every request a known token made, refused ones too, in its tenant's history and
    // recent requests (handed over with the usage batch, never on the request path).
    const principal = c.get('principal');
    if (principal) {
      // An unknown path under a valid token names no operation.
      const operation = obs.operation ?? 'unmatched';
      recordRequestUsage(c, principal.tenantId, {
        at: started,
        tokenId: principal.tokenId,
        operation,
        status: line.status,
        units: obs.limiter === 'admitted' ? (obs.cost ?? 0) : 0,
        latencyMs: duration,
        refusedBy: obs.refusedBy,
        ...cacheOutcome(obs.cache),
        ...keyRejection(c.error),
        request: {
          request_id: line.request_id,
          at: started,
          token_id: principal.tokenId,
          operation,
          method: line.method,
          status: line.status,
          code: line.code,
          limiter: obs.limiter ?? null,
          policy: obs.refusedBy ?? null,
          cache: line.cache,
          upstream_status: line.upstream_status,
          upstream_attempts: line.upstream_attempts,
          latency_ms: duration,
          upstream_ms: line.upstream_ms,
          trace_id: line.trace_id,
          via: line.via,
        },
      });
    }
  });
}

type LogLine = ReturnType<typeof logLine>;

function logLine(c: Context<HonoEnv>, obs: Observation, duration: number) {
  const status = c.res.status;
  const error = c.error;
  const code = error instanceof GatewayError ? error.code : (obs.code ?? (status < 400 ? 0 : null));
  const cf = c.req.raw.cf;
  return {
    request_id: c.get('requestId'),
    trace_id: obs.traceId ?? null,
    tenant_id: c.get('tenant')?.id ?? c.get('principal')?.tenantId ?? null,
    // The token's id, never the token (also of a token refused after it was found).
    token_id: c.get('token')?.id ?? c.get('principal')?.tokenId ?? null,
    // The operation id, under the field name dashboards already read (docs/OBSERVABILITY.md).
    route: obs.operation ?? null,
    method: c.req.method,
    status,
    code,
    upstream_status: obs.upstreamStatus ?? upstreamStatusOf(error),
    cache: obs.cache ?? null,
    // Why a stale entry answered: the platform failed (stale-if-error).
    stale_reason: obs.staleReason ?? null,
    upstream_attempts: obs.attempts ?? null,
    idempotency: obs.idempotency ?? null,
    limiter: obs.limiter ? (obs.refusedBy ? `${obs.limiter}:${obs.refusedBy}` : obs.limiter) : null,
    cost: obs.cost ?? null,
    duration_ms: duration,
    upstream_ms: obs.upstreamMs ?? null,
    colo: typeof cf?.colo === 'string' ? cf.colo : null,
  };
}

/**
 * One Analytics Engine point per request, when the ANALYTICS binding is there
 * (docs/ANALYTICS.md has the layout and queries).
 */
function writeDataPoint(c: Context<HonoEnv>, line: LogLine, obs: Observation): void {
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
    doubles: [line.duration_ms, line.upstream_ms ?? 0, line.cost ?? 0, obs.bytes ?? 0],
  });
}

/** The platform's status an upstream failure carries, if any. */
function upstreamStatusOf(error: unknown): number | null {
  if (!(error instanceof GatewayError)) return null;
  const status = error.details.upstream_status;
  return typeof status === 'number' ? status : null;
}

/** The platform's refusal of the tenant's key (its 401 or 403), for the key's health. */
function keyRejection(error: unknown): { keyRejected?: number } {
  if (!(error instanceof GatewayError) || error.kind !== 'UPSTREAM_AUTH_REJECTED') return {};
  const status = error.details.upstream_status;
  return typeof status === 'number' ? { keyRejected: status } : {};
}

/** A cached read's outcome for the usage history: BYPASS (no-store) did not look. */
function cacheOutcome(cache: Observation['cache']): { cache?: 'hit' | 'miss' } {
  if (cache === 'MISS') return { cache: 'miss' };
  if (cache === 'HIT' || cache === 'STALE' || cache === 'L1') return { cache: 'hit' };
  return {};
}
