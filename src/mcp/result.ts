/**
 * A tool call's result as JSON text (docs/MCP.md, "Results"): the platform's `data` as
 * `structuredContent` and as the text of a text block; a failure as a text block with the
 * envelope's code, message and request id, `isError: true`. The data is spliced in as the
 * platform sent it, not parsed into objects and serialized again: at a 23 KB answer that
 * round trip cost more than the rest of the call (BENCHMARKS.md, "MCP").
 */
import type { GatewayError } from '../errors';
import { GATEWAY_META, isObject, META, SERVER_INFO } from './protocol';

/**
 * An answer's envelope as a tool call reads it, the gateway's or the platform's: any object
 * with a `code`, its other members unknowns (the strict read of the platform's is
 * upstream/normalize.ts's parseEnvelope).
 */
export interface LooseEnvelope {
  code: unknown;
  msg: unknown;
  data: unknown;
}

export function envelopeOf(text: string): LooseEnvelope | null {
  try {
    const value: unknown = JSON.parse(text);
    return isLooseEnvelope(value) ? value : null;
  } catch {
    return null;
  }
}

function isLooseEnvelope(value: unknown): value is LooseEnvelope {
  return isObject(value) && 'code' in value;
}

export function refusalEnvelope(err: GatewayError, requestId: string): LooseEnvelope {
  return { code: err.code, msg: err.message, data: { request_id: requestId, ...err.details } };
}

const ENVELOPE_HEAD = '{"code":0,"msg":"';
const DATA_MEMBER = ',"data":';

/**
 * The `data` of a success as JSON text. The platform's envelope is `{"code":0,"msg":"…",
 * "data":…}` (checked against its parse: these three members, in this order), so its data is
 * the text from `"data":` to the closing brace, taken as it came: serializing it again would
 * cost more than the rest of the call (BENCHMARKS.md, "MCP"). Any other form is serialized.
 */
export function dataTextOf(text: string, envelope: LooseEnvelope): string {
  const members = Object.keys(envelope);
  if (
    text.startsWith(ENVELOPE_HEAD) &&
    members.length === 3 &&
    members[0] === 'code' &&
    members[1] === 'msg' &&
    members[2] === 'data'
  ) {
    const msgEnd = closingQuote(text, ENVELOPE_HEAD.length);
    const end = text.trimEnd().length - 1;
    if (msgEnd > 0 && text.startsWith(DATA_MEMBER, msgEnd + 1) && text[end] === '}') {
      return text.slice(msgEnd + 1 + DATA_MEMBER.length, end);
    }
  }
  return JSON.stringify(envelope.data ?? null);
}

/** The index of the quote that closes a JSON string whose text starts at `from`; -1 if none. */
function closingQuote(text: string, from: number): number {
  for (let i = text.indexOf('"', from); i !== -1; i = text.indexOf('"', i + 1)) {
    let slashes = 0;
    while (text[i - 1 - slashes] === '\\') slashes++;
    if (slashes % 2 === 0) return i;
  }
  return -1;
}

/** The platform's `data` as structured content, and as JSON text for clients that read only text. */
export function success(
  dataText: string,
  requestId: string,
  modern: boolean,
  extra: Record<string, unknown>,
): string {
  // 2025-era structured content is an object; a list or a scalar is there as text only.
  const structured = modern || dataText.trimStart().startsWith('{');
  return (
    `{${modern ? '"resultType":"complete",' : ''}"content":[{"type":"text","text":` +
    `${JSON.stringify(dataText)}}]` +
    `${structured ? `,"structuredContent":${dataText}` : ''}` +
    `,"_meta":${JSON.stringify(resultMeta(requestId, modern, extra))}}`
  );
}

/**
 * A failure an agent can act on: the envelope's code, message and request id, in words
 * and as the envelope itself; a 429 or 503 also says when to retry.
 */
export function failure(
  envelope: LooseEnvelope,
  requestId: string,
  modern: boolean,
  retryAfter: string | null,
  extra: Record<string, unknown>,
): string {
  const retry = retryAfter && /^\d+$/.test(retryAfter) ? ` Retry after ${retryAfter} s.` : '';
  const said = `Error ${String(envelope.code)}: ${String(envelope.msg)} (request_id ${requestId}).${retry}`;
  return JSON.stringify({
    ...(modern ? { resultType: 'complete' } : {}),
    content: [{ type: 'text', text: `${said}\n${JSON.stringify(envelope)}` }],
    isError: true,
    _meta: resultMeta(requestId, modern, extra),
  });
}

function resultMeta(requestId: string, modern: boolean, extra: Record<string, unknown>) {
  return {
    [GATEWAY_META.requestId]: requestId,
    ...extra,
    ...(modern ? { [META.serverInfo]: SERVER_INFO } : {}),
  };
}
