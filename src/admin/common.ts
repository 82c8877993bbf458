/** Shared pieces of the operator API's handlers: store, TenantGuard and audit access. */
import type { Context } from 'hono';
import { GatewayError } from '../errors';
import { isolateAdmission } from '../limits/admission';
import { log } from '../log';
import type { TokenLimits } from '../metering/policy';
import { auditLog, type NewAuditEntry } from '../objects/audit/audit-log';
import { versionForKey } from '../objects/tenant/record/cache-version';
import { type GuardParts, guardFor } from '../objects/tenant/tenant-guard';
import type { TokenSpecOf } from '../objects/tenant/tokens/token-changes';
import type { AuditContext } from '../objects/tenant/tokens/token-registry';
import { directStores, type Stores } from '../tenants/stores';
import type { Issued } from '../tenants/token-store';
import type { HonoEnv } from '../types/context';
import type { StoredTenant } from '../types/tenants';

type AdminContext = Context<HonoEnv>;

/** The operator API reads KV directly (no memo): it must see its own writes. */
export function adminStores(c: AdminContext): Promise<Stores> {
  return directStores(c.env, c.get('settings'));
}

export async function existingTenant(stores: Stores, id: string): Promise<StoredTenant> {
  const tenant = await stores.tenants.getStored(id);
  if (!tenant) throw noSuchTenant();
  return tenant;
}

export const noSuchTenant = () =>
  new GatewayError('RESOURCE_NOT_FOUND', { message: 'No such tenant' });

export { guardFor };

/**
 * Applies a change in a tenant's TenantGuard, then drops this isolate's lease
 * of the tenant: its next request here sees the change at once, and other
 * isolates see it when their lease ends (LEASE_MAX_MS).
 */
export async function changeGuard<T>(
  c: AdminContext,
  tenantId: string,
  change: (guard: GuardParts) => Promise<T>,
): Promise<T> {
  const result = await change(guardFor(c.env, tenantId));
  isolateAdmission.forget(tenantId);
  return result;
}

/**
 * Issues a token: its secret is made here, the token (with its own limits, so it
 * never works without them) is decided and written by the tenant's TenantGuard.
 */
export async function mintToken(
  c: AdminContext,
  stores: Stores,
  tenantId: string,
  spec: TokenSpecOf,
  limits: TokenLimits | null,
): Promise<Issued> {
  const { token, ...minted } = await stores.tokens.mint();
  const guard = guardFor(c.env, tenantId);
  const { record } = await guard.tokens().issue(tenantId, minted, spec, limits, Date.now());
  if (limits) isolateAdmission.forget(tenantId);
  return { token, record };
}

/** Who is acting, from where: what every audit entry of this request says. */
export function auditContext(c: AdminContext, actor?: string): AuditContext {
  const cf = c.req.raw.cf as { colo?: unknown } | undefined;
  return {
    request_id: c.get('requestId'),
    // A partner's own change (POST /token/rotate) names its token: `token:tok_…`.
    actor: actor ?? c.get('operator')?.actor ?? 'admin-token',
    ip: c.req.header('cf-connecting-ip') ?? null,
    colo: typeof cf?.colo === 'string' ? cf.colo : null,
  };
}

/**
 * Records an operator action in the AuditLog and the log stream. Callers pass
 * ids and field names only, never a token or a platform key.
 */
export async function audit(
  c: AdminContext,
  action: string,
  entry: Partial<Omit<NewAuditEntry, 'action' | 'request_id' | 'ip' | 'colo'>> = {},
) {
  const record: NewAuditEntry = {
    ...auditContext(c, entry.actor),
    action,
    tenant_id: entry.tenant_id ?? null,
    token_id: entry.token_id ?? null,
    detail: entry.detail ?? {},
  };
  log.info(`audit.${action}`, record);
  await auditLog(c.env).record(record);
}

/**
 * Hands a new tenant's TenantGuard its record, which the guard keeps from then on (its
 * changes never wait for KV to show it), and the cache version of its platform key
 * (objects/tenant/record/cache-version.ts); a key changed later takes it in the guard's
 * turn (its record part).
 */
export async function welcomeTenant(
  c: AdminContext,
  stores: Stores,
  tenant: StoredTenant,
): Promise<void> {
  const version = await versionForKey(stores.keys, tenant.id, tenant.key_fingerprint, (other) =>
    guardFor(c.env, other).tenantRecord().cacheVersion(),
  );
  await changeGuard(c, tenant.id, (g) => g.tenantRecord().welcome(tenant, version));
}
