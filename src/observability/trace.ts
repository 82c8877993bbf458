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
import type { HonoEnv, TraceContext } from '../types/context';
import { validTracestate } from './tracestate';

/** version-traceid-parentid-flags, lower-case hex (W3C Trace Context, level 1). */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

export function traceContext() {
  return createMiddleware<HonoEnv>(async function traceContext(c, next) {
    const trace = readTrace(c.req.header('traceparent'), c.req.header('tracestate'));
    c.set('trace', trace);
    c.get('obs').traceId = trace.traceId;
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
  const traceId = valid && match?.[2] ? match[2] : randomHex(16);
  const flags = valid && match?.[4] ? match[4] : '01';
  const trace: TraceContext = { traceId, traceparent: `00-${traceId}-${randomHex(8)}-${flags}` };
  // Passed on only with a valid traceparent, and only when it is a valid list.
  const tracestate = valid ? validTracestate(state) : undefined;
  if (tracestate) trace.tracestate = tracestate;
  return trace;
}

/** Two hex digits per byte value, made once per isolate. */
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

function randomHex(bytes: number): string {
  const out = crypto.getRandomValues(new Uint8Array(bytes));
  let hex = '';
  let any = 0;
  for (const b of out) {
    hex += HEX[b];
    any |= b;
  }
  // An all-zero id is invalid; 2^-64 and less, but cheap to rule out.
  return any === 0 ? randomHex(bytes) : hex;
}
