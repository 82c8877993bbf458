/** Shared pieces of the operator API: envelopes, params, store and audit access. */
import type { Context } from 'hono';
import { z } from 'zod';
import type { NewAuditEntry } from '../audit/log';
import type { Bindings, HonoEnv } from '../env';
import { GatewayError } from '../errors';
import { keyRing } from '../tenants/crypto';
import { TenantStore } from '../tenants/store';
import type { StoredTenant } from '../tenants/types';

type AdminContext = Context<HonoEnv>;

export const ok = (data: unknown) => ({ code: 0, msg: 'Success', data });

const tenantId = z.string().regex(/^ten_[0-9A-Za-z]{16}$/, 'id must be a tenant id (ten_...)');
const tokenId = z.string().regex(/^tok_[0-9A-Za-z]{16}$/, 'token_id must be a token id (tok_...)');
export const tenantParams = z.object({ id: tenantId });
export const tokenParams = z.object({ id: tenantId, token_id: tokenId });

/** The operator API reads KV directly (no memo): it must see its own writes. */
export async function adminStore(c: AdminContext): Promise<TenantStore> {
  return new TenantStore(c.env.TENANTS, await keyRing(c.var.settings.KEY_ENCRYPTION_KEY));
}

export async function existingTenant(store: TenantStore, id: string): Promise<StoredTenant> {
  const tenant = await store.getStored(id);
  if (!tenant) throw new GatewayError('RESOURCE_NOT_FOUND', 'No such tenant');
  return tenant;
}

export function tenantGuard(env: Bindings, id: string) {
  return env.TENANT_GUARD.get(env.TENANT_GUARD.idFromName(id));
}

/**
 * Records an operator action in the AuditLog and the log stream. Callers pass
 * ids and field names only, never a token or a platform key.
 */
export async function audit(c: AdminContext, action: string, entry: Partial<Omit<NewAuditEntry, 'action' | 'request_id'>> = {}) {
  const record: NewAuditEntry = {
    action,
    tenant_id: entry.tenant_id ?? null,
    token_id: entry.token_id ?? null,
    request_id: c.var.requestId,
    detail: entry.detail ?? {},
  };
  console.log(JSON.stringify({ level: 'info', event: `audit.${action}`, ...record }));
  await c.env.AUDIT_LOG.get(c.env.AUDIT_LOG.idFromName('global')).record(record);
}
