/** A token to issue from its body (tokens.contract.ts `tokenSpecSchema`): scopes and expiry checked. */
import { invalidField } from '../errors';
import type { TokenSpecOf } from '../objects/tenant/tokens/token-changes';
import { grantScopes, PRESET_NAMES, scopesOf } from '../tenants/scopes';
import { MAX_TOKEN_LIFETIME_S, type TokenSpec } from './tokens.contract';

/**
 * A token to issue. `groups` are the operation groups the gateway serves now
 * (catalogOf(settings).groups): a scope of another group is unknown.
 */
export function newToken(
  spec: TokenSpec,
  groups: readonly string[],
  now = Date.now(),
): TokenSpecOf {
  const { scopes, unknown } = grantScopes(spec.scopes, groups);
  if (unknown.length > 0) {
    const allowed = [...PRESET_NAMES, ...scopesOf(groups)];
    const message = `Unknown scope ${unknown.join(', ')}; allowed: ${allowed.join(', ')}`;
    throw invalidField('body', 'scopes', message, allowed);
  }
  if (spec.expires_at && spec.expires_in_s) {
    throw invalidField('body', 'expires_at', 'give expires_at or expires_in_s, not both');
  }
  let expires: number | null = null;
  if (spec.expires_in_s) expires = now + spec.expires_in_s * 1000;
  if (spec.expires_at) {
    expires = Date.parse(spec.expires_at);
    if (expires <= now)
      throw invalidField('body', 'expires_at', 'expires_at must be in the future');
    if (expires > now + MAX_TOKEN_LIFETIME_S * 1000) {
      throw invalidField('body', 'expires_at', 'expires_at must be within 5 years');
    }
  }
  return {
    name: spec.name,
    scopes,
    expires_at: expires === null ? null : new Date(expires).toISOString(),
  };
}
