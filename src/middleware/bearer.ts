/**
 * The gateway as an OAuth protected resource (RFC 9728, docs/OAUTH.md): which resource a
 * request is for, its metadata's URL, and the `WWW-Authenticate: Bearer` challenge of
 * every refusal of a gateway token (RFC 6750 3), so a client that holds no token, or a
 * bad one, finds where to get one. Two resources: the API (the gateway's origin) and
 * `/mcp`; an MCP tool call's own request is `/mcp`'s. The challenge of `/mcp` is made by
 * its own `unauthorized()` (mcp/route.ts) with these pieces; this middleware makes the
 * API's, for every 401 of a gateway token (40100 to 40103).
 *
 * @example app.use(bearerChallenges())
 */
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { ERRORS } from '../errors';
import { toolCallOf } from '../observability/via';
import type { HonoEnv } from '../types/context';

export const MCP_PATH = '/mcp';
const METADATA_PATH = '/.well-known/oauth-protected-resource';

/** The API's resource identifier (its origin), and `/mcp`'s. */
export const apiResource = (c: Context<HonoEnv>) => new URL(c.req.url).origin;
export const mcpResource = (c: Context<HonoEnv>) => `${apiResource(c)}${MCP_PATH}`;

/** The resource this request is for: `/mcp` (or one of its tool calls), else the API. */
export function resourceOf(c: Context<HonoEnv>): string {
  const mcp = c.req.path === MCP_PATH || toolCallOf(c.req.raw) !== undefined;
  return mcp ? mcpResource(c) : apiResource(c);
}

/** Where a resource's metadata is (RFC 9728 3.1: the path after the well-known name). */
export function metadataUrlOf(resource: string): string {
  const url = new URL(resource);
  const path = url.pathname === '/' ? '' : url.pathname;
  return `${url.origin}${METADATA_PATH}${path}`;
}

/**
 * One challenge (RFC 6750 3, RFC 9728 5.1): `error="invalid_token"` when a token came and
 * was refused, `insufficient_scope` with the `scope` a call needs, and always where the
 * resource's metadata is.
 */
export function bearerChallenge(
  resource: string,
  opts: { error?: 'invalid_token' | 'insufficient_scope'; scope?: string } = {},
): string {
  const parts = [`resource_metadata="${metadataUrlOf(resource)}"`];
  if (opts.error) parts.unshift(`error="${opts.error}"`);
  if (opts.scope) parts.push(`scope="${opts.scope}"`);
  return `Bearer ${parts.join(', ')}`;
}

/** The gateway token refusals that are 401s (docs/ERRORS.md). */
const TOKEN_REFUSALS = new Set<number>([
  ERRORS.MISSING_TOKEN.code,
  ERRORS.INVALID_TOKEN.code,
  ERRORS.TOKEN_REVOKED.code,
  ERRORS.TOKEN_EXPIRED.code,
]);

/** Adds the challenge to every 401 of a gateway token that has none yet. */
export function bearerChallenges() {
  return createMiddleware<HonoEnv>(async function bearerChallenges(c, next) {
    await next();
    const code = c.get('errorCode');
    if (c.res.status !== 401 || code === undefined || !TOKEN_REFUSALS.has(code)) return;
    if (c.res.headers.has('WWW-Authenticate')) return;
    const error = code === ERRORS.MISSING_TOKEN.code ? {} : { error: 'invalid_token' as const };
    c.res.headers.set('WWW-Authenticate', bearerChallenge(resourceOf(c), error));
  });
}
