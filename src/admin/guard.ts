/** The operator API's handle on a tenant's TenantGuard Durable Object. */
import type { Bindings } from '../env';

export function tenantGuard(env: Bindings, tenantId: string) {
  return env.TENANT_GUARD.get(env.TENANT_GUARD.idFromName(tenantId));
}
