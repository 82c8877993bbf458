/**
 * W3C Trace Context (docs/RESILIENCE.md, "Traces"): a request's `traceparent`
 * is taken up when it is valid, or a new trace is started. The gateway's own
 * span id goes to the platform in `traceparent` (with the caller's
 * `tracestate` when it is a valid list: tracestate.ts) and back to the caller; the trace id goes into the request
 * log line and the Analytics Engine point.
 *
 * @example app.use(traceContext())
 */
import { createMiddleware } from 'hono/factory';
import { toHex } from '../hash';
import type { HonoEnv, TraceContext } from '../types/context';
import { validTracestate } from './tracestate';

/** version-traceid-parentid-flags, lower-case hex (W3C Trace Context, level 1). */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

export function traceContext() {
  return createMiddleware<HonoEnv>(async function traceContext(c, next) {
    const trace = readTrace(c.req.header('traceparent'), c.req.header('tracestate'));
    c.set('trace', trace);
    await next();
    c.res.headers.set('traceparent', trace.traceparent);
  });
}

/** The caller's trace continued with a span of our own, or a new one. */
export function readTrace(header: string | undefined, state: string | undefined): TraceContext {
  const match = TRACEPARENT.exec(header?.trim().toLowerCase() ?? '');
  const valid =
    match !== null &&
    match[1] !== 'ff' &&
    !/^0+$/.test(match[2] ?? '') &&
    !/^0+$/.test(match[3] ?? '');
  // One draw for both ids: the span id's 8 bytes, and the trace id's 16 when it is new.
  const random = crypto.getRandomValues(new Uint8Array(24));
  const traceId = valid && match?.[2] ? match[2] : (hexOf(random, 8, 24) ?? randomHex(16));
  const spanId = hexOf(random, 0, 8) ?? randomHex(8);
  const flags = valid && match?.[4] ? match[4] : '01';
  const trace: TraceContext = { traceId, traceparent: `00-${traceId}-${spanId}-${flags}` };
  // Passed on only with a valid traceparent, and only when it is a valid list.
  const tracestate = valid ? validTracestate(state) : undefined;
  if (tracestate) trace.tracestate = tracestate;
  return trace;
}

/** Bytes `from` to `to` in hex; null when all are zero (an invalid id: 2^-64 and less). */
function hexOf(bytes: Uint8Array, from: number, to: number): string | null {
  let any = 0;
  for (let i = from; i < to; i++) any |= bytes[i] ?? 0;
  return any === 0 ? null : toHex(bytes, from, to);
}

function randomHex(bytes: number): string {
  return hexOf(crypto.getRandomValues(new Uint8Array(bytes)), 0, bytes) ?? randomHex(bytes);
}
