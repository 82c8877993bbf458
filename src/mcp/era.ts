/**
 * Which revision a request speaks, from the request alone (no session): a request whose
 * `_meta` names a protocol version is a 2026-07-28 one, checked against its headers
 * (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`); any other is of the handshake
 * revisions (2025-06-18, 2025-11-25), whose `MCP-Protocol-Version`, when sent, must be one
 * of them. A mismatch is the fault the 2026-07-28 transport names (docs/MCP.md, "Versions").
 */
import {
  base64Text,
  type Fault,
  fault,
  isObject,
  LEGACY_VERSIONS,
  META,
  MODERN_VERSION,
  type Params,
  RPC,
  type RpcId,
  SUPPORTED_VERSIONS,
} from './protocol';

export type Era = { modern: true } | { modern: false; version: string | undefined };

/** Methods only the stateless revision has. */
const MODERN_ONLY = new Set(['server/discover', 'subscriptions/listen']);

export function eraOf(
  request: { id: RpcId; method: string; params: Params },
  header: (name: string) => string | undefined,
): Era | Fault {
  const { id, method, params } = request;
  const meta = isObject(params._meta) ? params._meta : undefined;
  const claim = meta?.[META.version];
  const versionHeader = header('mcp-protocol-version');
  if (claim === undefined) {
    if (versionHeader === MODERN_VERSION || MODERN_ONLY.has(method)) {
      return fault(
        RPC.INVALID_PARAMS,
        `Invalid params: a ${MODERN_VERSION} request carries _meta["${META.version}"] and _meta["${META.capabilities}"]`,
        400,
        id,
      );
    }
    if (versionHeader !== undefined && !LEGACY_VERSIONS.includes(versionHeader)) {
      return unsupported(versionHeader, id);
    }
    return { modern: false, version: versionHeader };
  }
  if (claim !== MODERN_VERSION) return unsupported(String(claim), id);
  if (!isObject(meta?.[META.capabilities])) {
    return fault(
      RPC.INVALID_PARAMS,
      `Invalid params: _meta["${META.capabilities}"] must be an object`,
      400,
      id,
    );
  }
  const mismatch = headerMismatch(request, header);
  return mismatch ? fault(RPC.HEADER_MISMATCH, mismatch, 400, id) : { modern: true };
}

function unsupported(requested: string, id: RpcId): Fault {
  return fault(RPC.UNSUPPORTED_VERSION, 'Unsupported protocol version', 400, id, {
    supported: [...SUPPORTED_VERSIONS],
    requested,
  });
}

/** Why the mirrored headers do not match the body, or null when they do. */
function headerMismatch(
  { method, params }: { method: string; params: Params },
  header: (name: string) => string | undefined,
): string | null {
  const checks: [name: string, value: unknown][] = [
    ['MCP-Protocol-Version', MODERN_VERSION],
    ['Mcp-Method', method],
  ];
  if (method === 'tools/call') checks.push(['Mcp-Name', params.name]);
  for (const [name, body] of checks) {
    const sent = header(name.toLowerCase());
    if (sent === undefined) return `Header mismatch: the ${name} header is required`;
    const value = decodeSentinel(sent);
    if (value !== body) {
      return `Header mismatch: ${name} header value '${sent.slice(0, 100)}' does not match the body's`;
    }
  }
  return null;
}

/** A header value in the `=?base64?…?=` form the 2026-07-28 transport uses for unsafe text. */
function decodeSentinel(value: string): string | null {
  const m = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/.exec(value);
  return m ? base64Text(m[1] ?? '') : value;
}
