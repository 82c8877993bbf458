/**
 * The MCP wire (docs/MCP.md): the revisions `/mcp` speaks, JSON-RPC 2.0 framing, and the
 * faults a message can have before it reaches a method. A fault is a value, not a throw:
 * each is answered as the JSON-RPC error the specification names, with its HTTP status.
 */
import { GATEWAY_VERSION } from '../version';

/** The stateless revision: every request carries its version and capabilities in `_meta`. */
export const MODERN_VERSION = '2026-07-28';
/** The handshake revisions (`initialize`), newest first: what `initialize` settles on. */
export const LEGACY_VERSIONS: readonly string[] = ['2025-11-25', '2025-06-18'];
export const SUPPORTED_VERSIONS: readonly string[] = [MODERN_VERSION, ...LEGACY_VERSIONS];

/** The `_meta` keys of a 2026-07-28 request. */
export const META = {
  version: 'io.modelcontextprotocol/protocolVersion',
  capabilities: 'io.modelcontextprotocol/clientCapabilities',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
} as const;

/**
 * The gateway's own `_meta` keys (docs/MCP.md, "The gateway's `_meta`"): a write's
 * idempotency key on a request; the request id, cache outcome and replay on a result.
 */
export const GATEWAY_META = {
  idempotencyKey: 'apgw/idempotency_key',
  requestId: 'apgw/request_id',
  cache: 'apgw/cache',
  replayed: 'apgw/idempotent_replayed',
} as const;

export const SERVER_INFO = {
  name: 'agent-platform-gateway',
  title: 'Agent Platform gateway',
  version: GATEWAY_VERSION,
} as const;

/** JSON-RPC error codes: the standard ones, then those MCP 2026-07-28 reserves. */
export const RPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  HEADER_MISMATCH: -32020,
  UNSUPPORTED_VERSION: -32022,
} as const;

export type RpcId = string | number;
export type Params = Record<string, unknown>;

export type Message =
  | { kind: 'request'; id: RpcId; method: string; params: Params }
  | { kind: 'notification'; method: string; params: Params }
  /** A client's answer to a server request: this server sends none, so it is only acknowledged. */
  | { kind: 'response' };

/** A JSON-RPC error, the HTTP status it is answered with, and the request's id when known. */
export interface Fault {
  fault: true;
  code: number;
  message: string;
  status: number;
  id: RpcId | null;
  data?: Record<string, unknown>;
}

export function fault(
  code: number,
  message: string,
  status: number,
  id: RpcId | null = null,
  data?: Record<string, unknown>,
): Fault {
  return { fault: true, code, message, status, id, ...(data ? { data } : {}) };
}

export const isFault = (v: unknown): v is Fault =>
  typeof v === 'object' && v !== null && (v as Partial<Fault>).fault === true;

export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The UTF-8 text that base64 (standard alphabet) encodes, or null when it encodes none. */
export function base64Text(b64: string): string | null {
  try {
    const bytes = Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return null;
  }
}

/** One JSON-RPC message from a POST body's text, or the fault that keeps it from being one. */
export function parseMessage(text: string): Message | Fault {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return fault(RPC.PARSE_ERROR, 'Parse error: the body is not valid JSON', 400);
  }
  if (Array.isArray(value)) {
    return fault(
      RPC.INVALID_REQUEST,
      'Invalid Request: send one JSON-RPC message per POST (MCP 2025-06-18 and later have no batches)',
      400,
    );
  }
  if (!isObject(value) || value.jsonrpc !== '2.0') {
    return fault(RPC.INVALID_REQUEST, 'Invalid Request: a JSON-RPC 2.0 object is expected', 400);
  }
  const hasId = 'id' in value;
  const id = value.id;
  if (hasId && !isRpcId(id)) {
    return fault(RPC.INVALID_REQUEST, 'Invalid Request: id must be a string or an integer', 400);
  }
  const rpcId = hasId ? (id as RpcId) : null;
  if (!('method' in value)) {
    if (hasId && ('result' in value || 'error' in value)) return { kind: 'response' };
    return fault(RPC.INVALID_REQUEST, 'Invalid Request: method is required', 400, rpcId);
  }
  const { method, params = {} } = value;
  if (typeof method !== 'string' || method === '') {
    return fault(RPC.INVALID_REQUEST, 'Invalid Request: method must be a string', 400, rpcId);
  }
  if (!isObject(params)) {
    return fault(RPC.INVALID_PARAMS, 'Invalid params: params must be an object', 400, rpcId);
  }
  return rpcId === null
    ? { kind: 'notification', method, params }
    : { kind: 'request', id: rpcId, method, params };
}

/** MCP's ids: a string, or an integer (never null). */
const isRpcId = (id: unknown): boolean =>
  typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id));

/** The body of a JSON-RPC answer, its result given as JSON text; `jsonrpc` first, as a reader expects. */
export function resultBody(id: RpcId, resultJson: string): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultJson}}`;
}

export function errorBody(f: Pick<Fault, 'code' | 'message' | 'id' | 'data'>): string {
  const error = { code: f.code, message: f.message, ...(f.data ? { data: f.data } : {}) };
  return JSON.stringify({ jsonrpc: '2.0', id: f.id, error });
}
