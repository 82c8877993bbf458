/**
 * Cache versions (docs/CACHE.md, "Cache versions and purging"): part of every
 * cache key of the tenants that hold one, kept by each tenant's TenantGuard.
 */
import type { KeyIndex } from '../../../tenants/indexes';
import { randomBase62 } from '../../../tenants/token';

/** A cache version no entry has yet. */
export function newCacheVersion(): string {
  return `${Date.now().toString(36)}.${randomBase62(8)}`;
}

/**
 * Cache versions belong to a platform key: a tenant that starts using a key
 * takes the version of the tenants already using it (so they share entries),
 * or a fresh one when none does, so an entry purged before it existed is never
 * served to it. `versionOf` asks another tenant's TenantGuard.
 */
export async function versionForKey(
  keys: KeyIndex,
  tenantId: string,
  fingerprint: string,
  versionOf: (otherTenantId: string) => Promise<string | null>,
): Promise<string> {
  for (const other of await keys.tenantsSharing(fingerprint)) {
    if (other !== tenantId) return (await versionOf(other)) ?? '0';
  }
  return newCacheVersion();
}
