/**
 * The tiered read cache: L1 in this isolate's memory (cache/l1.ts), then L2
 * on the Workers Cache API, then the platform, with stale-while-revalidate
 * and one upstream read per key at a time (cache/coalesce.ts).
 *
 * An entry is fresh for `ttl_s`, then served stale for `grace_s` while one
 * background refresh runs. Past that, when the platform fails, it still
 * answers for `stale_if_error_s` (stale-if-error, docs/RESILIENCE.md). Only
 * successful envelopes (HTTP 200, code 0) are stored, in both tiers.
 */
import { count } from '../stats';
import type { CacheStatus, CacheTier } from '../types/outcomes';
import type { CachePolicy } from '../types/settings';
import type { UpstreamResult } from '../upstream/normalize';
import { Coalescer } from './coalesce';
import { cacheUrl } from './key';
import { ByteLru, type L1Entry } from './l1';

export interface CacheOutcome {
  result: UpstreamResult;
  status: CacheStatus;
  tier?: CacheTier;
  /** Seconds since the entry was fetched from the platform. */
  age: number;
  /** Set when a stale entry answered because the platform failed: why (`breaker_open`, …). */
  staleReason?: string;
}

/** How long past its grace an entry may answer when the platform fails, unless the policy says. */
export const DEFAULT_STALE_IF_ERROR_S = 86_400;

export interface ReadThrough {
  /** Canonical cache key (cache/key.ts), or null to bypass the cache entirely. */
  key: string | null;
  /** Whose entry it is in L1 (the platform key's fingerprint): each owner has a fair share. */
  owner: string;
  policy: CachePolicy;
  /** Caller sent `Cache-Control: no-cache`: fetch now, then store. */
  revalidate: boolean;
  fetchFresh: () => Promise<UpstreamResult>;
  waitUntil: (promise: Promise<unknown>) => void;
  /** Bytes the L1 tier may hold (L1_CACHE_BYTES). */
  l1Bytes: number;
  /** How long a request waits for another one's read of the same key before reading itself. */
  followerTimeoutMs: number;
  /** Why a failed read may be answered from an old entry, or null when it may not. */
  staleReason?: (err: unknown) => string | null;
  now?: number;
}

const STORED_AT = 'x-gateway-stored-at';

/** Bound 0 until the first cached read sets it from L1_CACHE_BYTES (settings come with requests). */
const l1 = new ByteLru(0);
const reads = new Coalescer<UpstreamResult>();

export async function readThrough(r: ReadThrough): Promise<CacheOutcome> {
  const now = r.now ?? Date.now();
  if (!r.key || r.policy.ttl_s <= 0) {
    return { result: await r.fetchFresh(), status: 'BYPASS', age: 0 };
  }
  const key = r.key;
  l1.resize(r.l1Bytes);

  let found: { entry: L1Entry; tier: CacheTier } | null = null;
  if (!r.revalidate) {
    const inMemory = l1.get(key);
    found = inMemory ? { entry: inMemory, tier: 'L1' as const } : await fromL2(key, r.owner);
    if (found) {
      const ageMs = now - found.entry.storedAt;
      const age = seconds(ageMs);
      const result = cachedResult(found.entry);
      if (ageMs < r.policy.ttl_s * 1000) return { result, status: 'HIT', tier: found.tier, age };
      if (ageMs < (r.policy.ttl_s + r.policy.grace_s) * 1000) {
        // Served stale at once; one refresh runs behind it.
        r.waitUntil(readAndStore(key, r).catch(() => undefined));
        return { result, status: 'STALE', tier: found.tier, age };
      }
    }
  }
  try {
    return { result: await readAndStore(key, r), status: 'MISS', age: 0 };
  } catch (err) {
    const stale = staleIfError(found ?? (await olderEntry(key, r)), err, r, now);
    if (!stale) throw err;
    return stale;
  }
}

function cachedResult(entry: L1Entry): UpstreamResult {
  return { status: 200, body: entry.body, envelope: null };
}

/** A revalidating request (no-cache) skipped the tiers: look now that the platform failed. */
async function olderEntry(key: string, r: ReadThrough) {
  if (!r.revalidate || !r.staleReason) return null;
  const inMemory = l1.get(key);
  return inMemory ? { entry: inMemory, tier: 'L1' as const } : await fromL2(key, r.owner);
}

/** The old entry as the answer when the platform failed and the entry is young enough. */
function staleIfError(
  found: { entry: L1Entry; tier: CacheTier } | null,
  err: unknown,
  r: ReadThrough,
  now: number,
): CacheOutcome | null {
  const reason = r.staleReason?.(err) ?? null;
  if (!found || reason === null) return null;
  const ageMs = now - found.entry.storedAt;
  if (ageMs >= lifetimeS(r.policy) * 1000) return null;
  count('stale_if_error');
  return {
    result: cachedResult(found.entry),
    status: 'STALE',
    tier: found.tier,
    age: seconds(ageMs),
    staleReason: reason,
  };
}

/** How long an entry can answer at all: fresh, grace, then stale-if-error. */
function lifetimeS(policy: CachePolicy): number {
  return policy.ttl_s + policy.grace_s + (policy.stale_if_error_s ?? DEFAULT_STALE_IF_ERROR_S);
}

/** What the L1 tier holds now, for GET /admin/stats. */
export function l1Stats(): { bytes: number; entries: number; max_bytes: number } {
  return { bytes: l1.bytes, entries: l1.size, max_bytes: l1.maxBytes };
}

async function fromL2(
  key: string,
  owner: string,
): Promise<{ entry: L1Entry; tier: CacheTier } | null> {
  count('cache_api_calls');
  const hit = await caches.default.match(await cacheUrl(key));
  if (!hit) return null;
  const entry = {
    body: new Uint8Array(await hit.arrayBuffer()),
    storedAt: Number(hit.headers.get(STORED_AT)),
  };
  l1.set(key, entry, owner);
  return { entry, tier: 'L2' };
}

/** One upstream read per key at a time; a success is stored in both tiers. */
function readAndStore(key: string, r: ReadThrough): Promise<UpstreamResult> {
  return reads.run(
    key,
    async () => {
      const result = await r.fetchFresh();
      if (isStorable(result)) {
        const entry = { body: result.body, storedAt: r.now ?? Date.now() };
        l1.set(key, entry, r.owner);
        r.waitUntil(toL2(key, entry, r.policy).catch(() => undefined));
      }
      return result;
    },
    r.waitUntil,
    r.followerTimeoutMs,
  );
}

function isStorable(result: UpstreamResult): boolean {
  return result.status === 200 && result.envelope?.code === 0;
}

async function toL2(key: string, entry: L1Entry, policy: CachePolicy): Promise<void> {
  const response = new Response(entry.body, {
    headers: {
      'content-type': 'application/json',
      // The Cache API keeps the entry through its grace and stale-if-error periods; freshness
      // is ours to judge.
      'cache-control': `max-age=${lifetimeS(policy)}`,
      [STORED_AT]: String(entry.storedAt),
    },
  });
  count('cache_api_calls');
  await caches.default.put(await cacheUrl(key), response);
}

function seconds(ms: number): number {
  return Math.max(0, Math.floor(ms / 1000));
}
