/** Shared pieces of the operator API: envelopes, params, store and audit access. */
import type { Context } from 'hono';
import { z } from 'zod';
import { auditLog, type NewAuditEntry } from '../audit/log';
import type { HonoEnv } from '../env';
import { GatewayError } from '../errors';
import { log } from '../log';
import { directStores, type Stores } from '../tenants/stores';
import type { StoredTenant } from '../tenants/types';

type AdminContext = Context<HonoEnv>;

export { ok } from '../errors';

export const tenantIdField = (name: string) =>
  z.string().regex(/^ten_[0-9A-Za-z]{16}$/, `${name} must be a tenant id (ten_...)`);
const tokenId = z.string().regex(/^tok_[0-9A-Za-z]{16}$/, 'token_id must be a token id (tok_...)');
export const tenantParams = z.object({ id: tenantIdField('id') });
export const tokenParams = z.object({ id: tenantIdField('id'), token_id: tokenId });

/** The operator API reads KV directly (no memo): it must see its own writes. */
export function adminStores(c: AdminContext): Promise<Stores> {
  return directStores(c.env, c.var.settings);
}

export async function existingTenant(stores: Stores, id: string): Promise<StoredTenant> {
  const tenant = await stores.tenants.getStored(id);
  if (!tenant) throw new GatewayError('RESOURCE_NOT_FOUND', { message: 'No such tenant' });
  return tenant;
}

export { guardFor } from '../limits/guard';

/**
 * Records an operator action in the AuditLog and the log stream. Callers pass
 * ids and field names only, never a token or a platform key.
 */
export async function audit(
  c: AdminContext,
  action: string,
  entry: Partial<Omit<NewAuditEntry, 'action' | 'request_id'>> = {},
) {
  const record: NewAuditEntry = {
    action,
    tenant_id: entry.tenant_id ?? null,
    token_id: entry.token_id ?? null,
    request_id: c.var.requestId,
    detail: entry.detail ?? {},
  };
  log.info(`audit.${action}`, record);
  await auditLog(c.env).record(record);
}
