/**
 * The gateway as an OAuth authorization server (docs/OAUTH.md): its issuer (its origin),
 * the resources it issues tokens for, the scopes a client may ask for, and the lives
 * of what it issues.
 */
import type { Context } from 'hono';
import { GatewayError } from '../errors';
import { apiResource, mcpResource } from '../middleware/bearer';
import { catalogOf } from '../operations/catalog';
import { expandScopes, PRESET_NAMES } from '../tenants/scopes';
import type { HonoEnv } from '../types/context';

/** How long an authorization code works (RFC 9700 4.5 says short; the issue, at most 60 s). */
export const CODE_TTL_MS = 60_000;
/** How long the partner has to approve or deny an app once it asked. */
export const REQUEST_TTL_MS = 10 * 60_000;

/** The issuer identifier (RFC 8414 2): the origin the metadata is fetched from. */
export const issuerOf = (c: Context<HonoEnv>) => new URL(c.req.url).origin;

/** The scope an app gets when it asks for none. */
export const DEFAULT_SCOPE = ['full'];

/**
 * The resource a `resource` parameter names (RFC 8707), as the gateway spells it: the
 * API (the origin, with or without its `/`) or `/mcp`; null for any other.
 */
export function resourceNamed(c: Context<HonoEnv>, value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.search || url.hash || value.includes('#') || url.origin !== apiResource(c)) return null;
  const path = url.pathname.replace(/\/$/, '');
  if (path === '') return apiResource(c);
  if (path === '/mcp') return mcpResource(c);
  return null;
}

/** The scope names a `scope` parameter asks for (space separated); refused if unknown. */
export function scopesAsked(c: Context<HonoEnv>, value: string | undefined): string[] {
  const names = (value ?? '').split(' ').filter(Boolean);
  if (names.length === 0) return DEFAULT_SCOPE;
  if (names.length > 64) {
    throw new GatewayError('OAUTH_INVALID_SCOPE', { message: 'At most 64 scopes' });
  }
  const { unknown } = expandScopes(names, catalogOf(c.get('settings')).groups);
  if (unknown.length > 0) {
    throw new GatewayError('OAUTH_INVALID_SCOPE', {
      message: `Unknown scope ${unknown[0]?.slice(0, 64)}; see scopes_supported in /.well-known/oauth-authorization-server`,
    });
  }
  return [...new Set(names)];
}

/** The scopes the metadata lists: the presets, then every scope there is. */
export function scopesSupported(c: Context<HonoEnv>): string[] {
  const groups = catalogOf(c.get('settings')).groups;
  return [...PRESET_NAMES, ...expandScopes(['full'], groups).scopes];
}
