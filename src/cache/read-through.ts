/**
 * A read-through cache on the Workers Cache API with stale-while-revalidate
 * and per-isolate request coalescing.
 *
 * An entry is fresh for `ttl_s`, then served stale for `grace_s` while one
 * background refresh runs. Concurrent misses for one key in one isolate share
 * one upstream call. Only successful envelopes (HTTP 200, code 0) are stored.
 */
import type { UpstreamResult } from '../upstream/normalize';

export type CacheStatus = 'HIT' | 'MISS' | 'STALE' | 'BYPASS';

export interface CachePolicy {
  ttl_s: number;
  grace_s: number;
}

export interface CacheOutcome {
  result: UpstreamResult;
  status: CacheStatus;
  /** Seconds since the entry was fetched from the platform. */
  age: number;
}

export interface ReadThrough {
  /** Cache key URL, or null to bypass the cache entirely. */
  key: string | null;
  policy: CachePolicy;
  /** Caller sent `Cache-Control: no-cache`: fetch now, then store. */
  revalidate: boolean;
  fetchFresh: () => Promise<UpstreamResult>;
  waitUntil: (promise: Promise<unknown>) => void;
  now?: number;
}

const STORED_AT = 'x-gateway-stored-at';

/** In-flight upstream reads of this isolate, by cache key. */
const inflight = new Map<string, Promise<UpstreamResult>>();

export async function readThrough(r: ReadThrough): Promise<CacheOutcome> {
  const now = r.now ?? Date.now();
  if (!r.key || r.policy.ttl_s <= 0)
    return { result: await r.fetchFresh(), status: 'BYPASS', age: 0 };
  const key = r.key;
  const cache = caches.default;

  if (!r.revalidate) {
    const hit = await cache.match(key);
    if (hit) {
      const ageMs = now - Number(hit.headers.get(STORED_AT));
      // Only HTTP 200 answers are stored.
      const result: UpstreamResult = { status: 200, text: await hit.text(), envelope: null };
      if (ageMs < r.policy.ttl_s * 1000) return { result, status: 'HIT', age: seconds(ageMs) };
      if (ageMs < (r.policy.ttl_s + r.policy.grace_s) * 1000) {
        r.waitUntil(fetchAndStore(key, r).catch(() => undefined));
        return { result, status: 'STALE', age: seconds(ageMs) };
      }
    }
  }
  return { result: await fetchAndStore(key, r), status: 'MISS', age: 0 };
}

/** One upstream read per key at a time; stores the answer if it is a success. */
function fetchAndStore(key: string, r: ReadThrough): Promise<UpstreamResult> {
  const running = inflight.get(key);
  if (running) return running;
  const fetched = r.fetchFresh();
  const stored = fetched
    .then((result) =>
      isStorable(result) ? store(key, result, r.policy, r.now ?? Date.now()) : undefined,
    )
    .catch(() => undefined)
    .finally(() => inflight.delete(key));
  inflight.set(key, fetched);
  r.waitUntil(stored);
  return fetched;
}

function isStorable(result: UpstreamResult): boolean {
  return result.status === 200 && result.envelope?.code === 0;
}

async function store(
  key: string,
  result: UpstreamResult,
  policy: CachePolicy,
  now: number,
): Promise<void> {
  const response = new Response(result.text, {
    headers: {
      'content-type': 'application/json',
      // The Cache API keeps the entry through its grace period; freshness is ours to judge.
      'cache-control': `max-age=${policy.ttl_s + policy.grace_s}`,
      [STORED_AT]: String(now),
    },
  });
  await caches.default.put(key, response);
}

function seconds(ms: number): number {
  return Math.max(0, Math.floor(ms / 1000));
}
