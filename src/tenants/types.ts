/** Records kept in the TENANTS KV namespace (docs/STORAGE.md). */

export interface Tenant {
  id: string;
  name: string;
  /** The platform key injected upstream. Never returned by any endpoint. */
  platform_key: string;
  /** SHA-256 (hex) of the platform key: its identity for cache keys, never the key. */
  key_fingerprint: string;
  status: 'active' | 'disabled';
  created_at: string;
  updated_at: string;
}

/** Stored under the SHA-256 of the token; the token itself is never stored. */
export interface TokenRecord {
  id: string;
  tenant_id: string;
  name: string;
  /** First characters and last four, so operators can tell tokens apart. */
  prefix: string;
  last4: string;
  created_at: string;
}

/** A tenant as the operator API shows it: everything but the platform key. */
export type PublicTenant = Omit<Tenant, 'platform_key' | 'key_fingerprint'>;

export function publicTenant({ platform_key: _secret, key_fingerprint: _fp, ...rest }: Tenant): PublicTenant {
  return rest;
}
