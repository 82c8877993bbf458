/** The operator CLI's `token list`: one line per token, its standing first after its name. */
import type { TokenListing } from '../../src/types/wire';

/** What a line shows of a listed token (GET /admin/tenants/{id}/tokens). */
export type TokenListItem = Pick<
  TokenListing,
  | 'id'
  | 'prefix'
  | 'last4'
  | 'name'
  | 'scopes'
  | 'expires_at'
  | 'revoked_at'
  | 'limits'
  | 'ancestor_id'
  | 'successor_id'
  | 'rotated_by'
  | 'rotated_at'
>;

/**
 * A revoked or expired token still lists (its record is kept a while), so the line
 * says so: an operator checking a revocation must not read it as still working.
 */
function standing(token: TokenListItem, now: number): string {
  if (token.revoked_at) return `revoked ${token.revoked_at}`;
  if (!token.expires_at) return 'expires never';
  return `${Date.parse(token.expires_at) <= now ? 'expired' : 'expires'} ${token.expires_at}`;
}

export function tokenRow(token: TokenListItem, now: number): string {
  return (
    `${token.id}  ${token.prefix}…${token.last4}  ${token.name}  [${token.scopes.join(' ')}]  ${standing(token, now)}` +
    `${token.limits ? `  own limits ${JSON.stringify(token.limits)}` : ''}` +
    `${token.ancestor_id ? `  replaces ${token.ancestor_id}` : ''}` +
    `${token.successor_id ? `  rotated into ${token.successor_id} by ${token.rotated_by} at ${token.rotated_at}` : ''}`
  );
}
