/**
 * Cache keys. A key covers the identity of the upstream key (its
 * fingerprint, itself a hash), the cache version of that key, the configured
 * operation and its normalized parameters. Neither a platform key nor a tenant
 * token can appear in it, and two different platform keys never share one.
 * The in-memory tier uses the canonical text itself; the Cache API gets a
 * SHA-256 of it, as a URL.
 */
import { sha256Hex } from '../hash';

export interface CacheKeyParts {
  keyFingerprint: string;
  version: string;
  /** Everything that decides what the platform answers. */
  upstreamBase: string;
  operationId: string;
  upstreamPath: string;
  credential: string;
  params: Record<string, unknown>;
  /** Validated query: defaults applied, so `?page_size=10` and no page_size agree. */
  query: Record<string, unknown>;
}

const CACHE_ORIGIN = 'https://gateway-cache.invalid/v1/';

/** The canonical text of a key: JSON, so no value can pass for a separator. */
export function cacheKey(p: CacheKeyParts): string {
  return JSON.stringify([
    p.keyFingerprint,
    p.version,
    p.upstreamBase,
    p.operationId,
    p.upstreamPath,
    p.credential,
    sorted(p.params),
    sorted(p.query),
  ]);
}

/** The Cache API's key for a canonical key: a hash, so nothing of the parts shows. */
export async function cacheUrl(key: string): Promise<string> {
  return CACHE_ORIGIN + (await sha256Hex(key));
}

export function cacheKeyUrl(p: CacheKeyParts): Promise<string> {
  return cacheUrl(cacheKey(p));
}

function sorted(record: Record<string, unknown>): [string, string][] {
  return Object.keys(record)
    .filter((k) => record[k] !== undefined)
    .sort()
    .map((k) => [k, String(record[k])]);
}
