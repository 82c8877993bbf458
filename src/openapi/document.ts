/**
 * The partner contract: an OpenAPI 3.1 document generated from the operations
 * the settings serve (operations/catalog.ts: the operation table, ROUTE_OVERRIDES'
 * amended schemas, PLATFORM_OPERATIONS), never written by hand per operation.
 * Parameters, bodies, bounds, enums, formats and defaults come from the zod
 * schemas (or the operator's JSON Schema they were made from); success answers
 * from the platform's models (openapi/models.ts); errors from the ERRORS
 * catalogue.
 */

import { mintBody, STREAM_SCOPE, streamParams } from '../browser/schemas';
import { ERRORS } from '../errors';
import { recentQuerySchema } from '../observability/recent-query';
import { oncePer } from '../once-per';
import type { Catalog } from '../operations/catalog';
import { takesIdempotencyKey } from '../operations/table';
import { rotateBody } from '../tenants/rotate-body';
import { hasScope, ROTATE_SCOPE, requiredScope, USAGE_SCOPE } from '../tenants/scopes';
import type { PlatformOperation, UploadSpec } from '../types/operations';
import { GATEWAY_VERSION } from '../version';
import { anyValue, MODELS, SUCCESS_DATA } from './models';
import { fieldsOf, type JsonSchema, jsonBody, parametersOf } from './schema';

type Operation = Record<string, unknown>;
export type OpenApiDocument = Record<string, unknown> & {
  paths: Record<string, Record<string, Operation>>;
};

const ref = (kind: string, name: string) => ({ $ref: `#/components/${kind}/${name}` });

/** Statuses every token-authenticated operation may answer with, besides its own. */
const COMMON_ERRORS = [400, 401, 403, 429, 500, 502, 503, 504];

const SECURITY = [{ gatewayToken: [] }, { apiKeyHeader: [] }, { browserToken: [] }];

/** `/team/info/:team_id` → `/team/info/{team_id}`. */
export const openApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, '{$1}');

const SUMMARIES: Record<string, string> = {
  'apikey.create': 'Create a platform API key',
  'apikey.delete': 'Delete a platform API key',
  'apikey.list': 'List the platform API keys',
  'calls.filter_values': 'Values usable as call-history filters',
  'calls.list': 'Credit consumption history',
  'team.list': 'List teams',
  'team.info': 'Get a team',
  'agent.list': 'List agents',
  'agent.info': 'Get an agent',
  'session.create': 'Create a session',
  'session.info': 'Get a session',
  'session.rename': 'Rename a session',
  'session.messages': "List a session's messages",
  'session.messages_between': 'Messages between two message ids',
  'browser.info': 'Get a browser instance',
  'browser.list': 'List browser instances',
  'browser.release': 'Release a browser instance',
  'browser.pages': "List a browser's pages",
  'session.marketing_data': "A marketing session's data",
  'session.upload': 'Upload files',
  'product.create': 'Submit a product for analysis',
  'product.info': "A product's analysis: its status and report",
  'product.query_results': 'Research results of a query',
  'report.info': 'Get a report',
  'report.update': 'Change fields of a report',
  'report.categories': 'The category taxonomy',
};

/** Rules across fields, which JSON Schema cannot hold: the gateway checks them too. */
const RULES: Record<string, string> = {
  'calls.list':
    '`end_date` must not be before `start_date`; `status` must be one of the `states` of GET ' +
    '/user/call/filter_values.',
  'session.messages': '`to_timestamp` must not be before `from_timestamp`.',
  'session.rename': 'A `session_id` in the body must be the one in the path.',
  'session.create':
    'The body is one of two shapes: `{team_id, task, title}` (the specification) or ' +
    "`{task, intent_id, mode, platform, extra}` (the platform's current client); fields of " +
    'one shape are refused in the other.',
  'session.upload':
    'The body is streamed to the platform as it arrives: at most `MAX_UPLOAD_BYTES` ' +
    '(413 past it, at once when `Content-Length` says so). Parts: `files` (at least one, each ' +
    'with a file name) and an optional `session_id`.',
  'report.update': 'Name at least one field.',
};

/** Whose view: a token's scopes, and whether it is a browser token (those cannot mint). */
export interface TokenView {
  scopes: readonly string[];
  browser: boolean;
}

const MINT_OPERATION_ID = 'auth.browser_token';
/** Every token may read itself (GET /token). */
const OWN_TOKEN_OPERATION_ID = 'token.own';

/**
 * The document of these operations, with every one, or only those a token's scopes
 * allow (its own view). The whole document is built once per catalog (per isolate).
 */
export function partnerDocument(catalog: Catalog, view: TokenView | null): OpenApiDocument {
  const whole = wholeDocument(catalog);
  return view ? viewOf(whole, view) : whole;
}

function viewOf(doc: OpenApiDocument, view: TokenView): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  for (const [path, operations] of Object.entries(doc.paths)) {
    const kept = Object.entries(operations).filter(([, op]) => visibleTo(op, view));
    if (kept.length > 0) paths[path] = Object.fromEntries(kept);
  }
  return { ...doc, paths };
}

/** An operation a token may call: its scope granted; minting, for any but a browser token. */
function visibleTo(op: Operation, view: TokenView): boolean {
  if (op.operationId === MINT_OPERATION_ID) return !view.browser;
  if (op.operationId === OWN_TOKEN_OPERATION_ID) return true;
  const scope = op['x-required-scope'];
  return typeof scope === 'string' && hasScope(view.scopes, scope);
}

/** The whole document, built once per catalog. */
const wholeDocument = oncePer(build);

function build(catalog: Catalog): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  const add = (path: string, method: string, operation: Operation) => {
    paths[path] = { ...paths[path], [method]: operation };
  };
  for (const op of catalog.operations) {
    add(openApiPath(op.path), op.method.toLowerCase(), operation(op));
  }
  add('/auth/browser-token', 'post', mintOperation());
  add('/usage', 'get', usageOperation());
  add('/usage/requests', 'get', ownRequestsOperation());
  add('/token', 'get', ownTokenOperation());
  add('/token/rotate', 'post', rotateOperation());
  add('/session/ws/{session_id}', 'get', streamOperation());
  return {
    openapi: '3.1.0',
    info: {
      title: 'Agent Platform gateway',
      version: GATEWAY_VERSION,
      description:
        'The Agent Platform Service through its edge gateway: call it with a gateway token ' +
        'where a platform client would use a platform key. Every answer is the platform ' +
        'envelope `{code, msg, data}`; `code` 0 is success.',
    },
    tags: [...catalog.groups, 'auth', 'usage'].map((name) => ({ name })),
    security: SECURITY,
    paths,
    components: {
      securitySchemes: {
        gatewayToken: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'apgw_…',
          description:
            'A gateway token, as `Authorization: Bearer apgw_…` (or a bare `Authorization: ' +
            'apgw_…`).',
        },
        apiKeyHeader: {
          type: 'apiKey',
          in: 'header',
          name: 'x-api-key',
          description: 'The same gateway token in `x-api-key`.',
        },
        browserToken: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'apgb_…',
          description:
            'A short-lived browser token from POST /auth/browser-token, sent with its Origin.',
        },
      },
      schemas: { ...MODELS, ErrorEnvelope: errorEnvelope(), PlatformEnvelope: platformEnvelope() },
      headers: HEADERS,
      responses: Object.fromEntries(errorStatuses().map((s) => [`E${s}`, errorResponse(s)])),
    },
  };
}

function operation(op: PlatformOperation): Operation {
  const scope = requiredScope(op);
  const keyed = takesIdempotencyKey(op);
  const parameters = [
    ...parametersOf(op.params, 'path'),
    ...parametersOf(op.query, 'query'),
    ...(keyed ? [IDEMPOTENCY_KEY_PARAMETER] : []),
  ];
  const statuses = [
    ...COMMON_ERRORS,
    ...(op.body || op.upload ? [413, 415] : []),
    ...(keyed ? [409, 422] : []),
  ].sort((a, b) => a - b);
  return {
    operationId: op.id,
    tags: [op.group],
    summary: SUMMARIES[op.id] ?? op.id,
    description: [
      `Needs the scope \`${scope}\`.`,
      op.declared ? 'Declared by the operator (PLATFORM_OPERATIONS).' : '',
      RULES[op.id] ?? '',
      op.cache
        ? 'Served from the read cache (see `X-Cache`, `Age`); `Cache-Control: no-cache` ' +
          'revalidates, `no-store` bypasses.'
        : '',
      op.secrets ? 'API key values are masked unless the token has `apikeys:admin`.' : '',
      keyed
        ? 'Send an `Idempotency-Key` to make a retry safe: a repeat within 24 h gets the first ' +
          'answer back (`Idempotent-Replayed: true`) without a second platform call.'
        : '',
    ]
      .filter(Boolean)
      .join(' '),
    'x-required-scope': scope,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...jsonBody(op.body),
    ...(op.upload ? uploadBody(op.upload) : {}),
    responses: {
      '200': success(SUCCESS_DATA[op.id] ?? anyValue, Boolean(op.cache), keyed),
      ...errorRefs(statuses),
    },
  };
}

/** `requestBody` of an upload: multipart/form-data, its files and text fields. */
function uploadBody(upload: UploadSpec) {
  const { properties, required } = fieldsOf(upload.fields);
  return {
    requestBody: {
      required: true,
      content: {
        'multipart/form-data': {
          schema: {
            type: 'object',
            properties: {
              [upload.fileField]: {
                type: 'array',
                items: { type: 'string', format: 'binary' },
                minItems: 1,
                maxItems: upload.maxFiles,
              },
              ...properties,
            },
            required: [upload.fileField, ...required],
          },
        },
      },
    },
  };
}

/** The optional Idempotency-Key of a write (docs/RESILIENCE.md). */
const IDEMPOTENCY_KEY_PARAMETER = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    '1 to 255 printable ASCII characters, unique per write. A repeat with the same request ' +
    'gets the first answer; with another request, 422; while the first is in flight, 409.',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};

function success(data: JsonSchema, cached: boolean, write = false) {
  return {
    description:
      'The platform envelope: `code` 0 with the data, or the platform’s own non-zero code ' +
      '(for example, not found) passed through.',
    headers: {
      'X-Request-ID': ref('headers', 'X-Request-ID'),
      RateLimit: ref('headers', 'RateLimit'),
      'RateLimit-Policy': ref('headers', 'RateLimit-Policy'),
      ...(cached
        ? {
            'X-Cache': ref('headers', 'X-Cache'),
            Age: ref('headers', 'Age'),
            'X-Stale-Reason': ref('headers', 'X-Stale-Reason'),
          }
        : {}),
      ...(write ? { 'Idempotent-Replayed': ref('headers', 'Idempotent-Replayed') } : {}),
    },
    content: {
      'application/json': {
        schema: {
          anyOf: [envelopeSchemaOf(data), ref('schemas', 'PlatformEnvelope')],
        },
      },
    },
  };
}

function mintOperation() {
  return {
    operationId: MINT_OPERATION_ID,
    tags: ['auth'],
    summary: 'Mint a browser token',
    description:
      'A tenant backend exchanges its gateway token for a short-lived browser token bound to ' +
      'one origin and a subset of its scopes (never API key scopes). Browser tokens cannot ' +
      'mint.',
    security: [{ gatewayToken: [] }, { apiKeyHeader: [] }],
    ...jsonBody(mintBody),
    responses: {
      '201': gatewayAnswer('The browser token, shown once.', {
        token: { type: 'string' },
        origin: { type: 'string' },
        scopes: { type: 'array', items: { type: 'string' } },
        expires_at: { type: 'string', format: 'date-time' },
      }),
      ...errorRefs([...COMMON_ERRORS, 409, 413, 415]),
    },
  };
}

function usageOperation() {
  return {
    operationId: 'usage.own',
    tags: ['usage'],
    summary: "The calling tenant's own usage",
    description:
      "Its limits, the current windows (the calling token's own meters too), its last 30 " +
      'days by day and its last 48 hours by hour, each with the refusals by policy. A ' +
      "self-service read: it spends none of the tenant's limits, only the " +
      `token's own self-service meter. Needs the scope \`${USAGE_SCOPE}\`.`,
    'x-required-scope': USAGE_SCOPE,
    responses: {
      '200': gatewayAnswer(
        'Limits, current meters and daily history.',
        {
          tenant_id: { type: 'string' },
          limits: { type: 'object' },
          meters: { type: 'array', items: { type: 'object' } },
          days: { type: 'array', items: { type: 'object' } },
          refusals: { type: 'array', items: { type: 'object' } },
          hours: { type: 'array', items: { type: 'object' } },
          hourly_refusals: { type: 'array', items: { type: 'object' } },
          refusals_by_operation: { type: 'object' },
        },
        ['tenant_id', 'limits', 'meters', 'days', 'hours'],
      ),
      ...errorRefs(COMMON_ERRORS),
    },
  };
}

function ownRequestsOperation() {
  return {
    operationId: 'usage.requests',
    tags: ['usage'],
    summary: "The calling tenant's own refused and failed requests, newest first",
    description:
      'Its requests of the last 7 days that were refused or failed (status 400 and above), ' +
      "as its TenantGuard keeps them (the newest 20,000), each with the reason: a 429's " +
      'policy, a 401, the platform refusing the key. Filter by `request_id` (the one an ' +
      'error envelope hands over), `token_id`, `status` (429, or 4xx), `operation`, or a ' +
      'time range (`from`, `to`). A ' +
      `self-service read, like /usage. Needs the scope \`${USAGE_SCOPE}\`.`,
    'x-required-scope': USAGE_SCOPE,
    parameters: parametersOf(recentQuerySchema, 'query'),
    responses: {
      '200': gatewayAnswer(
        'A page of requests, and the cursor of the next.',
        {
          requests: { type: 'array', items: { type: 'object' } },
          cursor: { type: ['string', 'null'] },
          kept: { type: 'object' },
        },
        ['requests', 'cursor'],
      ),
      ...errorRefs([...COMMON_ERRORS, 400]),
    },
  };
}

function ownTokenOperation() {
  return {
    operationId: OWN_TOKEN_OPERATION_ID,
    tags: ['auth'],
    summary: 'The calling token itself',
    description:
      "Its tenant's id and name, its own id, name, scopes, expiry and own limits, the tenant's " +
      'and its own meters as the TenantGuard counts them, and whether it may rotate itself. A ' +
      "self-service read: it spends none of the tenant's limits, only the token's own " +
      'self-service meter (its RateLimit fields). Any token may ask; it never names another ' +
      'tenant or token.',
    responses: {
      '200': gatewayAnswer('The token and its tenant.', {
        tenant: { type: 'object' },
        token: { type: 'object' },
        limits: { type: ['object', 'null'] },
        meters: { type: 'array', items: { type: 'object' } },
        can_rotate: { type: 'boolean' },
      }),
      ...errorRefs(COMMON_ERRORS),
    },
  };
}

function rotateOperation() {
  return {
    operationId: 'token.rotate',
    tags: ['auth'],
    summary: 'Rotate the calling token',
    description:
      'A new token with the same name, scopes, expiry and own limits, shown once; the calling ' +
      'token keeps working until `overlap_s` (default 3600) or `old_valid_until`. Needs ' +
      `\`${ROTATE_SCOPE}\`, which no preset and no browser token has.`,
    'x-required-scope': ROTATE_SCOPE,
    ...jsonBody(rotateBody),
    responses: {
      '201': gatewayAnswer('The new token, shown once, and when the old one ends.', {
        id: { type: 'string' },
        token: { type: 'string' },
        scopes: { type: 'array', items: { type: 'string' } },
        expires_at: { type: ['string', 'null'], format: 'date-time' },
        old_token: { type: 'object' },
      }),
      ...errorRefs([...COMMON_ERRORS, 409, 413, 415]),
    },
  };
}

/** A success of the gateway's own (not the platform's): the envelope around `properties`. */
function gatewayAnswer(
  description: string,
  properties: Record<string, JsonSchema>,
  required = Object.keys(properties),
) {
  return {
    description,
    headers: { 'X-Request-ID': ref('headers', 'X-Request-ID') },
    content: {
      'application/json': { schema: envelopeSchemaOf({ type: 'object', properties, required }) },
    },
  };
}

function streamOperation() {
  return {
    operationId: 'session.events',
    tags: ['sessions'],
    summary: "A session's live event stream (WebSocket)",
    description:
      'Send `Upgrade: websocket`. Browsers offer the subprotocols `apgw` and their browser ' +
      'token. The stream closes with 4401 when its token ends and 4403 when its tenant does. ' +
      `Needs \`${STREAM_SCOPE}\`.`,
    'x-required-scope': STREAM_SCOPE,
    parameters: parametersOf(streamParams, 'path'),
    responses: {
      '101': { description: 'Switching protocols: the stream is open.' },
      '426': ref('responses', 'E426'),
      ...errorRefs(COMMON_ERRORS),
    },
  };
}

/** `{"400": {$ref: …/E400}, …}`: the shared error answers, by status. */
const errorRefs = (statuses: number[]) =>
  Object.fromEntries(statuses.map((s) => [String(s), ref('responses', `E${s}`)]));

export function envelopeSchemaOf(data: JsonSchema): JsonSchema {
  return {
    type: 'object',
    properties: { code: { const: 0 }, msg: { type: 'string' }, data },
    required: ['code', 'msg', 'data'],
  };
}

function platformEnvelope(): JsonSchema {
  return {
    type: 'object',
    description: 'The platform’s own answer, passed through unchanged.',
    properties: { code: { type: 'integer' }, msg: { type: 'string' }, data: anyValue },
    required: ['code', 'msg', 'data'],
  };
}

export function errorEnvelope(): JsonSchema {
  return {
    type: 'object',
    description: "The gateway's own error: a documented code (docs/ERRORS.md), and the request id.",
    properties: {
      code: { type: 'integer', enum: Object.values(ERRORS).map((e) => e.code) },
      msg: { type: 'string' },
      data: {
        type: 'object',
        properties: {
          request_id: { type: 'string' },
          errors: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                location: { type: 'string', enum: ['path', 'query', 'body'] },
                field: { type: 'string' },
                message: { type: 'string' },
              },
            },
          },
          policy: { type: 'string' },
          retry_after_s: { type: ['integer', 'null'] },
          scope: { type: 'string' },
          upstream_status: { type: 'integer' },
        },
        required: ['request_id'],
      },
    },
    required: ['code', 'msg', 'data'],
  };
}

const errorStatuses = () =>
  [...new Set(Object.values(ERRORS).map((e) => e.status))].sort((a, b) => a - b);

function errorResponse(status: number) {
  const kinds = Object.entries(ERRORS).filter(([, e]) => e.status === status);
  return {
    description: kinds.map(([name, e]) => `${e.code} ${name}: ${e.msg}`).join('; '),
    headers: {
      'X-Request-ID': ref('headers', 'X-Request-ID'),
      ...(status === 429 || status === 503 ? { 'Retry-After': ref('headers', 'Retry-After') } : {}),
      ...(status === 429
        ? {
            RateLimit: ref('headers', 'RateLimit'),
            'RateLimit-Policy': ref('headers', 'RateLimit-Policy'),
          }
        : {}),
    },
    content: {
      'application/json': {
        schema: {
          allOf: [
            ref('schemas', 'ErrorEnvelope'),
            { properties: { code: { enum: kinds.map(([, e]) => e.code) } } },
          ],
        },
      },
    },
  };
}

const HEADERS = {
  'X-Request-ID': {
    description:
      'The request id (yours, when you send a valid one): in the logs, and sent upstream.',
    schema: { type: 'string' },
  },
  RateLimit: {
    description:
      'What is left of each policy and quota: `"name";r=<units left>;t=<seconds to reset>`, ' +
      'one item each.',
    schema: { type: 'string' },
  },
  'RateLimit-Policy': {
    description: 'Each policy and quota: `"name";q=<units>;w=<window seconds>`.',
    schema: { type: 'string' },
  },
  'Retry-After': {
    description: 'Seconds until the request can succeed.',
    schema: { type: 'integer' },
  },
  'X-Cache': {
    description: 'How the read cache answered.',
    schema: { type: 'string', enum: ['HIT', 'MISS', 'STALE', 'BYPASS'] },
  },
  Age: { description: 'Seconds since the platform answered.', schema: { type: 'integer' } },
  'X-Stale-Reason': {
    description:
      'Present when a stale entry answered because the platform failed (stale-if-error): ' +
      'why. `Warning: 111` says the same in words.',
    schema: {
      type: 'string',
      enum: ['breaker_open', 'platform_pause', 'timeout', 'unreachable', 'platform_error'],
    },
  },
  'Idempotent-Replayed': {
    description: '`true` when the answer is the kept answer to an earlier write with this key.',
    schema: { type: 'string', enum: ['true'] },
  },
};
