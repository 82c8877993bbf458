/**
 * What an operator lets a tenant's partner grant (docs/OAUTH.md, "Settings"), kept in the
 * tenant's TenantGuard: the most any OAuth grant or partner key may hold (default the
 * `full` preset: never the platform's API keys, self-rotation or `partner:manage`
 * unless named), whether self-registered apps may be approved, how many keys a partner
 * may have at once, and the own limits each new grant gets. No Worker code: the operator
 * API's definitions use the schema.
 */
import * as z from 'zod';
import { type Limits, type TokenLimits, tokenLimitsSchema } from '../metering/policy';
import type { PartnerAccess } from '../types/wire';

/** Most keys a partner may make, at most (docs/BOUNDS.md). */
export const MAX_PARTNER_KEYS = 1000;

export const DEFAULT_PARTNER_ACCESS: PartnerAccess = {
  grantable_scopes: ['full'],
  dynamic_clients: true,
  max_keys: 10,
  grant_limits: null,
};

export const partnerAccessSchema = z.strictObject({
  grantable_scopes: z.array(z.string().max(64)).max(64),
  dynamic_clients: z.boolean(),
  max_keys: z.number().int().min(0).max(MAX_PARTNER_KEYS),
  grant_limits: tokenLimitsSchema.nullable(),
}) satisfies z.ZodType<PartnerAccess>;

/** A change: the fields sent replace those kept (PUT /admin/tenants/{id}/partner-access). */
export const partnerAccessChange = partnerAccessSchema.partial();

/**
 * Why a partner key's own limits exceed its tenant's, or null when they do not: a rate
 * policy may allow no more in its window than the tenant's strictest policy does over the
 * same time (scaled), and a quota no more than the tenant's of the same period.
 */
export function beyondTenant(own: TokenLimits, tenant: Limits): string | null {
  for (const p of own.policies) {
    for (const t of tenant.policies) {
      const most = Math.ceil((t.limit * p.window_s) / t.window_s);
      if (p.limit > most) {
        return `${p.name} allows ${p.limit} in ${p.window_s} s; the account allows at most ${most} (${t.name})`;
      }
    }
  }
  for (const period of ['daily', 'monthly'] as const) {
    const mine = own.quota[period];
    const theirs = tenant.quota[period];
    if (mine !== undefined && theirs !== undefined && mine > theirs) {
      return `the ${period} quota is at most the account's, ${theirs}`;
    }
  }
  return null;
}
