/**
 * `/mcp`: the Model Context Protocol's streamable HTTP transport, stateless (docs/MCP.md).
 * Each POST is one JSON-RPC message, answered in JSON: 2026-07-28 requests (version and
 * capabilities in `_meta`; `server/discover`) and the handshake revisions 2025-06-18 and
 * 2025-11-25 (`initialize`, `notifications/initialized`, `ping`) alike, with no session,
 * so any isolate answers any request. `tools/list` shows the tools the token's scopes
 * allow; `tools/call` is the operation's own gateway request (./call.ts). GET and DELETE
 * (2025 session streams and ends) answer 405. Every answer is JSON-RPC: a refusal keeps
 * its envelope code as the error code, with the request id in `data`.
 *
 * @example app.route('/', mcpRoutes((request, c) => app.fetch(request, c.env, c.executionCtx)))
 */
import { type Context, Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { decodeUtf8, readCapped } from '../bytes';
import { ERRORS, GatewayError } from '../errors';
import { presentedToken, tenantAuth } from '../middleware/auth';
import { bearerChallenge, mcpResource } from '../middleware/bearer';
import { tenantLimits } from '../middleware/limits';
import { operationId } from '../observability/operation-id';
import { catalogOf } from '../operations/catalog';
import { hasScope } from '../tenants/scopes';
import type { HonoEnv } from '../types/context';
import { argumentsRefused, type CallOutcome, callTool, type Dispatch } from './call';
import { type Era, eraOf } from './era';
import {
  errorBody,
  type Fault,
  fault,
  isFault,
  isObject,
  LEGACY_VERSIONS,
  META,
  type Params,
  parseMessage,
  RPC,
  type RpcId,
  resultBody,
  SERVER_INFO,
  SUPPORTED_VERSIONS,
} from './protocol';
import { cursorOf, nameOfCursor, toolboxOf, toolPage } from './tools';

export type { Dispatch };

/** How long a client may keep a `tools/list` page (docs/MCP.md, "Limits"). */
export const TOOLS_TTL_MS = 60_000;
/** How long a client may keep `server/discover`'s answer. */
export const DISCOVER_TTL_MS = 3_600_000;

const INSTRUCTIONS =
  "The Agent Platform's operations that this token may call, one tool each, named by " +
  'operation id (team.list, session.create, …). Every call is a gateway request under the ' +
  "token's limits; reads may come from the gateway's cache. A failed call says its code, " +
  'message and request_id: correct the arguments it names, wait as long as a 429 says, or ' +
  'quote the request_id to the operator. Writes take an idempotency_key that makes a retry ' +
  'safe. Lists are paged with page_num and page_size.';

const JSON_TYPE = { 'content-type': 'application/json' };

export function mcpRoutes(dispatch: Dispatch): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();
  app.post('/mcp', operationId('mcp'), (c) => serve(c, dispatch));
  // No stream to open and no session to end: a POST is the only way in.
  app.all('/mcp', operationId('mcp'), (c) =>
    answerFault(
      c,
      fault(
        ERRORS.METHOD_NOT_ALLOWED.code,
        'Method not allowed: /mcp takes each JSON-RPC message as a POST; it has no GET stream and no session',
        405,
      ),
      { Allow: 'POST' },
    ),
  );
  return app;
}

async function serve(c: Context<HonoEnv>, dispatch: Dispatch): Promise<Response> {
  if (!presentedToken(c, false)) {
    return unauthorized(
      c,
      new GatewayError('MISSING_TOKEN', {
        message: 'Missing gateway token: send Authorization: Bearer <token>',
      }),
      null,
    );
  }
  const type = c.req.header('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') {
    return refusal(c, new GatewayError('UNSUPPORTED_MEDIA_TYPE'), null);
  }
  const maxBytes = c.get('settings').MAX_BODY_BYTES;
  let text: string;
  try {
    const tooLarge = () =>
      new GatewayError('PAYLOAD_TOO_LARGE', {
        message: `A JSON-RPC message is at most ${maxBytes} bytes (MAX_BODY_BYTES)`,
      });
    const declared = c.req.header('content-length');
    if (declared !== undefined && Number(declared) > maxBytes) throw tooLarge();
    // A declared length is the most the runtime reads; without one, the stream is counted.
    text =
      declared !== undefined
        ? await c.req.raw.text()
        : decodeUtf8(await readCapped(c.req.raw.body, maxBytes, tooLarge));
  } catch (err) {
    if (err instanceof GatewayError) return refusal(c, err, null);
    throw err;
  }
  const message = parseMessage(text);
  if (isFault(message)) return answerFault(c, message);
  if (message.kind !== 'request') {
    // Notifications (notifications/initialized, cancellations) and answers need nothing done.
    const refused = await standing(c);
    return refused ? refusal(c, refused, null) : c.body(null, 202);
  }
  const era = eraOf(message, (name) => c.req.header(name));
  if (isFault(era)) return answerFault(c, era);
  const { id, method, params } = message;
  if (method === 'tools/call') return toolCall(c, dispatch, id, params, era.modern);
  const refused = await standing(c);
  if (refused) return refusal(c, refused, id);
  switch (method) {
    case 'tools/list':
      return toolList(c, id, params, era.modern);
    case 'initialize':
      if (!era.modern) return answer(c, id, initializeResult(params));
      break;
    case 'ping':
      if (!era.modern) return answer(c, id, {});
      break;
    case 'server/discover':
      return answer(c, id, discoverResult());
  }
  return answerFault(
    c,
    fault(RPC.METHOD_NOT_FOUND, `Method not found: ${method}`, methodNotFoundStatus(era), id),
  );
}

/** 2026-07-28 answers an unknown method 404; the 2025 revisions read the error from a 200. */
const methodNotFoundStatus = (era: Era) => (era.modern ? 404 : 200);

/**
 * The token's checks that a call passes, its standing in the TenantGuard (revocation)
 * included, for everything but a `tools/call`, whose own request checks them. Discovery
 * is self-service (metering/billable.ts): it spends one unit of the token's own
 * self-service meter, never the tenant's data limits.
 */
const checkToken = tenantAuth();
const checkStanding = tenantLimits('self', () => 1);

async function standing(c: Context<HonoEnv>): Promise<GatewayError | null> {
  try {
    await checkToken(c, () => checkStanding(c, async () => {}).then(() => undefined));
    return null;
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
}

function initializeResult(params: Params) {
  const asked = params.protocolVersion;
  const version =
    typeof asked === 'string' && LEGACY_VERSIONS.includes(asked) ? asked : LEGACY_VERSIONS[0];
  return {
    protocolVersion: version,
    capabilities: { tools: { listChanged: false } },
    serverInfo: SERVER_INFO,
    instructions: INSTRUCTIONS,
  };
}

function discoverResult() {
  return {
    resultType: 'complete',
    supportedVersions: SUPPORTED_VERSIONS,
    capabilities: { tools: { listChanged: false } },
    instructions: INSTRUCTIONS,
    ttlMs: DISCOVER_TTL_MS,
    cacheScope: 'public',
    _meta: { [META.serverInfo]: SERVER_INFO },
  };
}

function toolList(c: Context<HonoEnv>, id: RpcId, params: Params, modern: boolean): Response {
  const after = params.cursor === undefined ? '' : nameOfCursor(params.cursor);
  if (after === null) {
    return answerFault(
      c,
      fault(RPC.INVALID_PARAMS, 'Invalid params: cursor is not one this server gave', 200, id),
    );
  }
  const box = toolboxOf(catalogOf(c.get('settings')));
  const { tools, last } = toolPage(box, c.get('token').scopes, after, modern);
  return answer(c, id, {
    ...(modern ? { resultType: 'complete' } : {}),
    tools,
    ...(last !== null ? { nextCursor: cursorOf(last) } : {}),
    ...(modern
      ? { ttlMs: TOOLS_TTL_MS, cacheScope: 'private', _meta: { [META.serverInfo]: SERVER_INFO } }
      : {}),
  });
}

async function toolCall(
  c: Context<HonoEnv>,
  dispatch: Dispatch,
  id: RpcId,
  params: Params,
  modern: boolean,
): Promise<Response> {
  const { name, arguments: args = {} } = params;
  if (typeof name !== 'string') {
    return answerFault(
      c,
      fault(RPC.INVALID_PARAMS, 'Invalid params: name must be a string', 200, id),
    );
  }
  if (!isObject(args)) {
    return answerFault(
      c,
      fault(RPC.INVALID_PARAMS, 'Invalid params: arguments must be an object', 200, id),
    );
  }
  const entry = toolboxOf(catalogOf(c.get('settings'))).byName.get(name);
  const outcome: CallOutcome = entry
    ? await callTool(c, dispatch, entry, args, isObject(params._meta) ? params._meta : {}, modern)
    : { kind: 'unknown_tool' };
  // A call that never became a request is answered only to a caller whose token, Origin and
  // scope hold: before that, a stranger could tell which tools exist from the answers.
  if (outcome.kind === 'unknown_tool' || outcome.kind === 'bad_arguments') {
    const refused = await standing(c);
    if (refused) return refusal(c, refused, id);
  }
  switch (outcome.kind) {
    case 'result':
      return c.body(resultBody(id, outcome.json), 200, { ...JSON_TYPE, ...outcome.headers });
    case 'bad_arguments':
      if (entry && hasScope(c.get('token')?.scopes ?? [], entry.scope)) {
        const json = argumentsRefused(c, outcome.error, modern);
        return c.body(resultBody(id, json), 200, JSON_TYPE);
      }
      return unknownTool(c, name, id);
    case 'unknown_tool':
      return unknownTool(c, name, id);
    case 'refused': {
      const { code, message, status, details } = outcome.refusal;
      const refused = { code, message, status, details, headers: {} };
      return status === 401 ? unauthorized(c, refused, id) : refusal(c, refused, id);
    }
  }
}

/** A tool that does not exist, or that this token may not use: the same answer for both. */
function unknownTool(c: Context<HonoEnv>, name: string, id: RpcId): Response {
  return answerFault(c, fault(RPC.INVALID_PARAMS, `Unknown tool: ${name.slice(0, 200)}`, 200, id));
}

function answer(c: Context<HonoEnv>, id: RpcId, result: unknown): Response {
  return c.body(resultBody(id, JSON.stringify(result)), 200, JSON_TYPE);
}

interface RefusalParts {
  code: number;
  message: string;
  status: number;
  details: Record<string, unknown>;
  headers: Record<string, string>;
}

/**
 * Every 401 `/mcp` answers, from its own token check or from a tool call's request: the
 * one place its challenge is made, naming `/mcp`'s protected resource metadata (RFC 9728),
 * where an MCP client starts OAuth (docs/OAUTH.md).
 */
function unauthorized(c: Context<HonoEnv>, err: RefusalParts, id: RpcId | null): Response {
  const error = presentedToken(c, false) ? { error: 'invalid_token' as const } : {};
  return answerFault(c, fault(err.code, err.message, 401, id, err.details), {
    ...err.headers,
    'WWW-Authenticate': bearerChallenge(mcpResource(c), error),
  });
}

/** A gateway refusal as a JSON-RPC error: its envelope code and message, its HTTP status and headers. */
function refusal(c: Context<HonoEnv>, err: RefusalParts, id: RpcId | null): Response {
  if (err.status === 401) return unauthorized(c, err, id);
  return answerFault(c, fault(err.code, err.message, err.status, id, err.details), err.headers);
}

function answerFault(
  c: Context<HonoEnv>,
  f: Fault,
  headers: Record<string, string> = {},
): Response {
  c.set('errorCode', f.code);
  const data = { ...f.data, request_id: c.get('requestId') };
  return c.body(errorBody({ ...f, data }), f.status as ContentfulStatusCode, {
    ...JSON_TYPE,
    ...headers,
  });
}
