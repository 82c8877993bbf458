/** The body that describes a token to issue: name, scopes or presets, expiry, own limits. */
import * as z from 'zod';
import { invalidField } from '../errors';
import { tokenLimitsSchema } from '../metering/policy';
import type { TokenSpecOf } from '../objects/tenant/tokens/token-changes';
import { nameField } from '../routes/schemas';
import { grantScopes, PRESET_NAMES, scopesOf } from '../tenants/scopes';

/** Longest lifetime an operator may give a token (docs/BOUNDS.md). */
export const MAX_TOKEN_LIFETIME_S = 5 * 365 * 86_400;

export const tokenSpecSchema = z.strictObject({
  name: nameField('name', 64).default('default'),
  scopes: z.array(z.string().max(64)).min(1).max(32).default(['full']),
  expires_at: z.iso
    .datetime({ offset: true, error: 'expires_at must be an ISO 8601 date-time with a zone' })
    .optional(),
  expires_in_s: z.number().int().min(60).max(MAX_TOKEN_LIFETIME_S).optional(),
  /** The token's own rate policies and quotas, counted besides its tenant's. */
  limits: tokenLimitsSchema.optional(),
});

export type TokenSpec = z.infer<typeof tokenSpecSchema>;

/**
 * A token to issue. `groups` are the route groups the gateway serves now
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
