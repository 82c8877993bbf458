/**
 * Cache keys. The key is a SHA-256 over the identity of the upstream key (its
 * fingerprint, itself a hash), the tenant's cache version, the configured
 * route and its normalized parameters. Neither a platform key nor a tenant
 * token can appear in it, and two different platform keys never share one.
 */
import { sha256Hex } from '../tenants/token';

export interface CacheKeyParts {
  keyFingerprint: string;
  version: string;
  /** Everything that decides what the platform answers. */
  upstreamBase: string;
  routeId: string;
  upstreamPath: string;
  credential: string;
  params: Record<string, unknown>;
  /** Validated query: defaults applied, so `?page_size=10` and no page_size agree. */
  query: Record<string, unknown>;
}

const CACHE_ORIGIN = 'https://gateway-cache.invalid/v1/';

export async function cacheKeyUrl(p: CacheKeyParts): Promise<string> {
  const canonical = JSON.stringify([
    p.keyFingerprint,
    p.version,
    p.upstreamBase,
    p.routeId,
    p.upstreamPath,
    p.credential,
    sorted(p.params),
    sorted(p.query),
  ]);
  return CACHE_ORIGIN + (await sha256Hex(canonical));
}

function sorted(record: Record<string, unknown>): [string, string][] {
  return Object.keys(record)
    .filter((k) => record[k] !== undefined)
    .sort()
    .map((k) => [k, String(record[k])]);
}
