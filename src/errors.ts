/**
 * The one error type of the gateway and its documented code catalog
 * (docs/ERRORS.md). Every response the gateway makes itself is the platform's
 * `{code, msg, data}` envelope; `data` carries the request id and details.
 */
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { HonoEnv } from './types/context';
import type { Envelope, ErrorData, FieldError, InputLocation } from './types/wire';

export const ERRORS = {
  BAD_REQUEST: { code: 40000, status: 400, msg: 'Bad request' },
  VALIDATION_FAILED: { code: 40001, status: 400, msg: 'Request validation failed' },
  INVALID_JSON: { code: 40002, status: 400, msg: 'Request body is not valid JSON' },
  UNKNOWN_PARAMETER: { code: 40003, status: 400, msg: 'Unknown parameter' },
  IDEMPOTENCY_KEY_INVALID: {
    code: 40004,
    status: 400,
    msg: 'Idempotency-Key must be 1 to 255 printable ASCII characters',
  },
  IDEMPOTENCY_KEY_REQUIRED: {
    code: 40005,
    status: 400,
    msg: 'This operation needs an Idempotency-Key header',
  },
  IDEMPOTENCY_KEY_NOT_TAKEN: {
    code: 40006,
    status: 400,
    msg: 'This operation takes no Idempotency-Key: its body is streamed to the platform, not kept',
  },
  // OAuth's own errors (docs/OAUTH.md): errorResponse() adds `error`, RFC 6749's (or
  // 7591's, 8707's) word for each, beside the envelope.
  OAUTH_INVALID_REQUEST: { code: 40010, status: 400, msg: 'invalid_request' },
  OAUTH_INVALID_GRANT: { code: 40011, status: 400, msg: 'invalid_grant' },
  OAUTH_UNAUTHORIZED_CLIENT: { code: 40012, status: 400, msg: 'unauthorized_client' },
  OAUTH_UNSUPPORTED_GRANT_TYPE: { code: 40013, status: 400, msg: 'unsupported_grant_type' },
  OAUTH_INVALID_SCOPE: { code: 40014, status: 400, msg: 'invalid_scope' },
  OAUTH_INVALID_TARGET: { code: 40015, status: 400, msg: 'invalid_target' },
  OAUTH_INVALID_REDIRECT_URI: { code: 40016, status: 400, msg: 'invalid_redirect_uri' },
  OAUTH_INVALID_CLIENT_METADATA: { code: 40017, status: 400, msg: 'invalid_client_metadata' },
  OAUTH_UNSUPPORTED_RESPONSE_TYPE: {
    code: 40018,
    status: 400,
    msg: 'unsupported_response_type',
  },
  MISSING_TOKEN: { code: 40100, status: 401, msg: 'Missing gateway token' },
  INVALID_TOKEN: { code: 40101, status: 401, msg: 'Invalid gateway token' },
  TOKEN_REVOKED: { code: 40102, status: 401, msg: 'Gateway token has been revoked' },
  TOKEN_EXPIRED: { code: 40103, status: 401, msg: 'Gateway token has expired' },
  ADMIN_UNAUTHORIZED: { code: 40104, status: 401, msg: 'Invalid or missing operator token' },
  ACCESS_TOKEN_INVALID: {
    code: 40105,
    status: 401,
    msg: 'Cloudflare Access token is missing, expired or not valid for this gateway',
  },
  OAUTH_INVALID_CLIENT: { code: 40106, status: 401, msg: 'invalid_client' },
  SCOPE_REQUIRED: { code: 40300, status: 403, msg: 'Token lacks the scope this route needs' },
  ORIGIN_NOT_ALLOWED: { code: 40301, status: 403, msg: 'Origin not allowed' },
  TENANT_DISABLED: { code: 40302, status: 403, msg: 'Tenant is disabled' },
  BROWSER_TOKEN_CANNOT_MINT: {
    code: 40303,
    status: 403,
    msg: 'A browser token cannot mint tokens',
  },
  OPERATOR_READ_ONLY: {
    code: 40304,
    status: 403,
    msg: 'Your operator role is viewer: it cannot change anything',
  },
  OPERATOR_NO_ROLE: {
    code: 40305,
    status: 403,
    msg: 'Your Access identity has no operator role (ACCESS_ROLES)',
  },
  OAUTH_ACCESS_DENIED: { code: 40306, status: 403, msg: 'access_denied' },
  NOT_FOUND: { code: 40400, status: 404, msg: 'No such route' },
  RESOURCE_NOT_FOUND: { code: 40401, status: 404, msg: 'Not found' },
  ADMIN_DISABLED: { code: 40402, status: 404, msg: 'Operator API is disabled' },
  METHOD_NOT_ALLOWED: { code: 40500, status: 405, msg: 'Method not allowed' },
  UPGRADE_REQUIRED: {
    code: 42600,
    status: 426,
    msg: 'This route is a WebSocket: send Upgrade: websocket',
  },
  UPLOAD_TIMEOUT: {
    code: 40800,
    status: 408,
    msg: 'The upload did not arrive within the deadline',
  },
  CONFLICT: { code: 40900, status: 409, msg: 'Conflict' },
  IDEMPOTENCY_IN_FLIGHT: {
    code: 40901,
    status: 409,
    msg: 'A request with this Idempotency-Key is still in progress; retry later',
  },
  ROTATION_IN_PROGRESS: {
    code: 40902,
    status: 409,
    msg: 'This token family is already rotating: one rotation at a time',
  },
  CONFIG_APPLY_STOPPED: {
    code: 40903,
    status: 409,
    msg: 'The apply stopped part-way: run it again to finish',
  },
  CONFIG_PLAN_STALE: {
    code: 41200,
    status: 412,
    msg: 'The fleet changed since this plan: plan again',
  },
  CONFIG_PLAN_REQUIRED: {
    code: 42800,
    status: 428,
    msg: "An apply names the plan it applies: If-Match with the plan's hash",
  },
  USAGE_EXPORT_OFF: {
    code: 40904,
    status: 409,
    msg: 'The usage export is off: it needs USAGE_SINK_URL, the USAGE_EVENTS queue and the USAGE_ARCHIVE bucket',
  },
  IDEMPOTENCY_KEY_REUSED: {
    code: 42200,
    status: 422,
    msg: 'This Idempotency-Key was used for another request',
  },
  PAYLOAD_TOO_LARGE: { code: 41300, status: 413, msg: 'Request body too large' },
  UNSUPPORTED_MEDIA_TYPE: {
    code: 41500,
    status: 415,
    msg: 'Request body must be application/json',
  },
  RATE_LIMITED: { code: 42900, status: 429, msg: 'Rate limit exceeded' },
  QUOTA_EXHAUSTED: { code: 42901, status: 429, msg: 'Quota exhausted' },
  UPSTREAM_RATE_LIMITED: {
    code: 42902,
    status: 429,
    msg: 'Platform asked for a pause on this platform key',
  },
  OAUTH_TEMPORARILY_UNAVAILABLE: { code: 42903, status: 429, msg: 'temporarily_unavailable' },
  INTERNAL: { code: 50000, status: 500, msg: 'Internal gateway error' },
  MISCONFIGURED: { code: 50001, status: 500, msg: 'Gateway is misconfigured' },
  UPSTREAM_HTTP_ERROR: { code: 50200, status: 502, msg: 'Platform answered with an error status' },
  UPSTREAM_NOT_JSON: { code: 50201, status: 502, msg: 'Platform answered with a non-JSON body' },
  UPSTREAM_INVALID_JSON: { code: 50202, status: 502, msg: 'Platform answered with invalid JSON' },
  UPSTREAM_BAD_ENVELOPE: {
    code: 50203,
    status: 502,
    msg: 'Platform answered without a {code, msg, data} envelope',
  },
  UPSTREAM_UNREACHABLE: { code: 50204, status: 502, msg: 'Platform could not be reached' },
  UPSTREAM_AUTH_REJECTED: {
    code: 50205,
    status: 502,
    msg: "Platform rejected this tenant's platform key",
  },
  UPSTREAM_TOO_LARGE: { code: 50206, status: 502, msg: 'Platform response too large' },
  USAGE_SINK_FAILED: { code: 50207, status: 502, msg: 'The usage sink did not accept the events' },
  LIMITER_UNAVAILABLE: { code: 50300, status: 503, msg: 'Rate limiter unavailable' },
  UPSTREAM_UNAVAILABLE: {
    code: 50301,
    status: 503,
    msg: 'Platform is failing; the gateway is not calling it for now',
  },
  UPSTREAM_BACKING_OFF: { code: 50302, status: 503, msg: 'Platform asked for a pause' },
  IDEMPOTENCY_UNAVAILABLE: {
    code: 50303,
    status: 503,
    msg: 'Idempotency-Key store unavailable; the write was not sent',
  },
  ACCESS_KEYS_UNAVAILABLE: {
    code: 50304,
    status: 503,
    msg: 'Cloudflare Access signing keys could not be fetched; retry shortly',
  },
  UPSTREAM_TIMEOUT: { code: 50400, status: 504, msg: 'Platform did not answer in time' },
} as const satisfies Record<string, { code: number; status: ContentfulStatusCode; msg: string }>;

export type ErrorKind = keyof typeof ERRORS;

/** The OAuth error (RFC 6749 5.2, 7591 3.2.2, 8707 2) each OAUTH_ code answers with. */
const OAUTH_WORDS: ReadonlyMap<number, string> = new Map(
  Object.entries(ERRORS)
    .filter(([kind]) => kind.startsWith('OAUTH_'))
    .map(([, e]) => [e.code, e.msg]),
);

export interface GatewayErrorOptions {
  /** Replaces the catalog text; must never contain a secret. */
  message?: string;
  /** Extra fields for the envelope's `data` (field names, bounds, ...). */
  details?: Record<string, unknown>;
  headers?: Record<string, string>;
}

/** V8's Error, with the stack depth it captures (workerd's types leave it out). */
const V8Error = Error as ErrorConstructor & { stackTraceLimit: number };

export class GatewayError extends Error {
  readonly details: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(
    readonly kind: ErrorKind,
    options: GatewayErrorOptions = {},
  ) {
    // A GatewayError is an answer (a 429, a 401), not a bug: nothing reads its stack, so
    // none is captured (workerd still records one for its own reports; errorAnswer()
    // makes an answer without an Error at all).
    const stackTraceLimit = V8Error.stackTraceLimit;
    V8Error.stackTraceLimit = 0;
    super(options.message ?? ERRORS[kind].msg);
    V8Error.stackTraceLimit = stackTraceLimit;
    this.name = 'GatewayError';
    this.details = options.details ?? {};
    this.headers = options.headers ?? {};
  }

  get code(): number {
    return ERRORS[this.kind].code;
  }

  get status(): ContentfulStatusCode {
    return ERRORS[this.kind].status;
  }
}

export type { FieldError, InputLocation };

/** A 400 for one or more rejected fields; `msg` joins their messages. */
export function validationFailed(...errors: [FieldError, ...FieldError[]]): GatewayError {
  return new GatewayError('VALIDATION_FAILED', {
    message: errors.map((e) => e.message).join('; '),
    details: { errors },
  });
}

/** A 400 for one rejected field. */
export function invalidField(
  location: InputLocation,
  field: string,
  message: string,
  allowed?: string[],
): GatewayError {
  return validationFailed({ location, field, message, ...(allowed ? { allowed } : {}) });
}

/**
 * The platform's success envelope, for answers the gateway makes itself; `ok<Shape>(…)`
 * checks `data` against the answer's wire type (types/wire.ts).
 */
export const ok = <T>(data: T): Envelope<T> => ({ code: 0, msg: 'Success', data });

/** What an error answer is made of: a GatewayError has it all, errorAnswer() takes it without one. */
type ErrorParts = Pick<GatewayError, 'code' | 'status' | 'message' | 'details' | 'headers'>;

export function errorResponse(c: Context<HonoEnv>, err: ErrorParts): Response {
  // The request's log line says which code it answered.
  c.set('errorCode', err.code);
  for (const [name, value] of Object.entries(err.headers)) c.header(name, value);
  const body: Envelope<ErrorData> = {
    code: err.code,
    msg: err.message,
    data: { request_id: c.get('requestId') ?? '', ...err.details },
  };
  // An OAuth endpoint's refusal also says RFC 6749's words (5.2), which OAuth clients read.
  const oauth = OAUTH_WORDS.get(err.code);
  if (oauth) return c.json({ error: oauth, error_description: err.message, ...body }, err.status);
  return c.json(body, err.status);
}

/**
 * The same answer as errorResponse(c, new GatewayError(kind, options)), without making an
 * Error: workerd records a stack with every Error made (for uncaught-exception reports),
 * whatever Error.stackTraceLimit says. For answers nothing throws, such as the 404.
 */
export function errorAnswer(
  c: Context<HonoEnv>,
  kind: ErrorKind,
  options: GatewayErrorOptions = {},
): Response {
  const { code, status, msg } = ERRORS[kind];
  return errorResponse(c, {
    code,
    status,
    message: options.message ?? msg,
    details: options.details ?? {},
    headers: options.headers ?? {},
  });
}
