/**
 * What a request's log line says about how it came (docs/OBSERVABILITY.md, "Via MCP"):
 * an MCP tool call (src/mcp/) is an ordinary gateway request that the gateway makes of
 * itself, marked here by its Request object, so nothing a caller sends can claim the mark.
 * The `/mcp` request that handed the call on writes no line of its own: the call's line is
 * the one, under the same request id.
 */
import type { Context } from 'hono';

/**
 * The requests the gateway made for MCP tool calls, with the tool's name and whether the
 * `/mcp` request's id was the caller's own.
 */
const toolCalls = new WeakMap<Request, { tool: string; callerId: boolean }>();

/** `/mcp` requests whose tool call went through as its own request, which logs it. */
const handedOn = new WeakSet<Context>();

export function markToolCall(c: Context, request: Request, tool: string): void {
  toolCalls.set(request, { tool, callerId: callerChoseId(c) });
}

/** The tool whose call this request is, if it is one. */
export function toolCallOf(request: Request): string | undefined {
  return toolCalls.get(request)?.tool;
}

/**
 * Whether the request id is one the caller chose (an X-Request-ID it sent, which the
 * gateway keeps), not one the gateway made: a tool call's is its `/mcp` request's.
 */
export function callerChoseId(c: Context): boolean {
  const call = toolCalls.get(c.req.raw);
  if (call) return call.callerId;
  return c.req.header('x-request-id') === c.get('requestId');
}

export function handOn(c: Context): void {
  handedOn.add(c);
}

export function wasHandedOn(c: Context): boolean {
  return handedOn.has(c);
}
