/**
 * A `tools/call` is an ordinary gateway request of the operation it stands for, never a
 * second pipeline (docs/MCP.md, "A call is a request"): its arguments become that
 * operation's method, path, query and JSON body; the caller's credentials, Origin and
 * client address go with it; it is sent through the same app with the same env and
 * execution context, under the `/mcp` request's id, marked as a tool call for its log line.
 * So token, scopes, validation, limits, cache, breakers, masking, idempotency, usage and
 * the request log are those of the HTTP call. Its envelope answer becomes the tool result.
 */
import type { Context } from 'hono';
import { ERRORS, GatewayError, invalidField } from '../errors';
import { handOn, markToolCall } from '../observability/via';
import type { HonoEnv } from '../types/context';
import { GATEWAY_META, isObject } from './protocol';
import { dataTextOf, envelopeOf, failure, refusalEnvelope, success } from './result';
import { IDEMPOTENCY_ARGUMENT, type ToolEntry } from './tools';

/** How a tool call's request reaches the app: `app.fetch` with the `/mcp` request's env and context. */
export type Dispatch = (request: Request, c: Context<HonoEnv>) => Promise<Response>;

/** What a call came to: a tool result, or an answer that is not one (a bad token, a tool it may not use). */
export type CallOutcome =
  /** The result as JSON text: the platform's data is spliced in as it came, never re-serialized. */
  | { kind: 'result'; json: string; headers: Record<string, string> }
  | {
      kind: 'refused';
      refusal: { code: number; message: string; status: number; details: Record<string, unknown> };
    }
  | { kind: 'unknown_tool' }
  /**
   * Arguments refused before any request was made: answered only once the caller's token,
   * Origin and scope are known good, so nothing is told of a tool to a caller who may not use it.
   */
  | { kind: 'bad_arguments'; error: GatewayError };

/** Headers of the caller's request that its tool call carries: who calls, and from where. */
const CARRIED = ['authorization', 'x-api-key', 'origin', 'cf-connecting-ip'] as const;

/** Headers of the call's answer that the `/mcp` answer carries too. */
const ANSWERED = ['RateLimit', 'RateLimit-Policy'] as const;

/** 403s that refuse the caller, not the call: answered as such, never as a tool result. */
const CALLER_REFUSALS = new Set<unknown>([
  ERRORS.ORIGIN_NOT_ALLOWED.code,
  ERRORS.TENANT_DISABLED.code,
]);

/** The tool result that says which argument was wrong, with the request id. */
export function argumentsRefused(
  c: Context<HonoEnv>,
  error: GatewayError,
  modern: boolean,
): string {
  c.set('errorCode', error.code);
  const requestId = c.get('requestId');
  return failure(refusalEnvelope(error, requestId), requestId, modern, null, {});
}

export async function callTool(
  c: Context<HonoEnv>,
  dispatch: Dispatch,
  entry: ToolEntry,
  args: Record<string, unknown>,
  meta: Record<string, unknown>,
  modern: boolean,
): Promise<CallOutcome> {
  const requestId = c.get('requestId');
  const request = toolRequest(c, entry, args, meta);
  if (request instanceof GatewayError) return { kind: 'bad_arguments', error: request };
  markToolCall(c, request, entry.modern.name);
  const res = await dispatch(request, c);
  // The call's own request wrote the log line and the usage row (observability/via.ts).
  handOn(c);
  const text = await res.text();
  const envelope = envelopeOf(text);
  const code = envelope?.code;
  if (res.status === 401 || (res.status === 403 && CALLER_REFUSALS.has(code))) {
    return {
      kind: 'refused',
      refusal: {
        code: typeof code === 'number' ? code : res.status * 100,
        message: typeof envelope?.msg === 'string' ? envelope.msg : `HTTP ${res.status}`,
        status: res.status,
        details: isObject(envelope?.data) ? envelope.data : {},
      },
    };
  }
  // A tool the token may not use answers exactly as one that does not exist.
  if (res.status === 403 && code === ERRORS.SCOPE_REQUIRED.code) return { kind: 'unknown_tool' };
  const headers: Record<string, string> = {};
  for (const name of ANSWERED) {
    const value = res.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  const resultMeta: Record<string, unknown> = {};
  const cache = res.headers.get('x-cache');
  if (cache) resultMeta[GATEWAY_META.cache] = cache;
  if (res.headers.get('idempotent-replayed') === 'true') resultMeta[GATEWAY_META.replayed] = true;
  const succeeded = res.status < 400 && envelope !== null && code === 0;
  const json = succeeded
    ? success(dataTextOf(text, envelope), requestId, modern, resultMeta)
    : failure(
        envelope ?? { code: null, msg: `HTTP ${res.status}`, data: text.slice(0, 500) },
        requestId,
        modern,
        res.headers.get('retry-after'),
        resultMeta,
      );
  return { kind: 'result', json, headers };
}

/** The operation's request for these arguments, or the refusal of arguments no URL can carry. */
function toolRequest(
  c: Context<HonoEnv>,
  entry: ToolEntry,
  args: Record<string, unknown>,
  meta: Record<string, unknown>,
): Request | GatewayError {
  const { operation, plan } = entry;
  const rest = { ...args };
  let key: unknown = meta[GATEWAY_META.idempotencyKey];
  if (plan.keyArgument && rest[IDEMPOTENCY_ARGUMENT] !== undefined) {
    key = rest[IDEMPOTENCY_ARGUMENT];
    delete rest[IDEMPOTENCY_ARGUMENT];
  }
  const filled: Record<string, string> = {};
  for (const name of plan.path) {
    const value = rest[name];
    delete rest[name];
    const segment = value === undefined || value === null ? '' : textOf(value);
    if (segment === '') return invalidField('path', name, `${name} is required`);
    // `.` and `..` are no path segment: a URL would resolve them away.
    if (segment === '.' || segment === '..')
      return invalidField('path', name, `${name} must not be . or ..`);
    filled[name] = encodeURIComponent(segment);
  }
  const path = operation.path
    .split('/')
    .map((part) => (part.startsWith(':') ? (filled[part.slice(1)] ?? part) : part))
    .join('/');
  const query = new URLSearchParams();
  const body: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(rest)) {
    if (plan.query.has(name) || !plan.hasBody) {
      if (value === undefined || value === null) continue;
      for (const item of Array.isArray(value) ? value : [value]) query.append(name, textOf(item));
    } else {
      body[name] = value;
    }
  }
  const url = new URL(path, c.req.url);
  url.search = query.toString();
  const headers = new Headers();
  for (const name of CARRIED) {
    const value = c.req.header(name);
    if (value !== undefined) headers.set(name, value);
  }
  headers.set('x-request-id', c.get('requestId'));
  for (const [name, value] of Object.entries(traceOf(c, meta))) headers.set(name, value);
  if (key !== undefined && key !== null) {
    const text = textOf(key);
    // The key travels as a header: text a header cannot hold is refused as Idempotency-Key is.
    if (!/^[\x20-\x7e]*$/.test(text)) return new GatewayError('IDEMPOTENCY_KEY_INVALID');
    headers.set('idempotency-key', text);
  }
  let payload: string | undefined;
  if (plan.hasBody) {
    headers.set('content-type', 'application/json');
    payload = JSON.stringify(body);
  }
  return new Request(url, { method: operation.method, headers, body: payload, cf: c.req.raw.cf });
}

const textOf = (value: unknown): string =>
  typeof value === 'string' ? value : JSON.stringify(value);

/**
 * The trace the call continues: the `/mcp` request's own span, or the caller's
 * `_meta.traceparent` when it sent no traceparent header (the MCP way of carrying one).
 */
function traceOf(c: Context<HonoEnv>, meta: Record<string, unknown>): Record<string, string> {
  // Only text a header can hold; the call's trace step then checks it as it checks any.
  const headerText = (v: unknown): v is string =>
    typeof v === 'string' && /^[\x20-\x7e]{1,512}$/.test(v);
  if (!c.req.header('traceparent') && headerText(meta.traceparent)) {
    return {
      traceparent: meta.traceparent,
      ...(headerText(meta.tracestate) ? { tracestate: meta.tracestate } : {}),
    };
  }
  const trace = c.get('trace');
  if (!trace) return {};
  return {
    traceparent: trace.traceparent,
    ...(trace.tracestate ? { tracestate: trace.tracestate } : {}),
  };
}
