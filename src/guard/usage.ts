/**
 * Usage history, as an isolate gathers it: hourly rollups per token, route
 * and status class (requests, units counted, a latency histogram) and
 * refusals per policy. Isolates aggregate locally and hand a batch to their
 * tenant's TenantGuard with their next lease call, or at least every
 * USAGE_FLUSH_MS; an isolate that dies loses at most its unsent batch
 * (docs/OBSERVABILITY.md, "Usage history").
 */
import type { RequestRow } from './recent-requests';

/** Upper bounds of the latency buckets, in ms; the last bucket is everything above. */
export const LATENCY_BUCKETS_MS = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000] as const;
/** A batch waits at most this long for a lease call before it is sent on its own. */
export const USAGE_FLUSH_MS = 10_000;

export type StatusClass = '2xx' | '3xx' | '4xx' | '5xx';

export interface UsageRow {
  /** Start of the hour, ms since the epoch. */
  hour: number;
  tokenId: string;
  route: string;
  status: StatusClass;
  requests: number;
  units: number;
  /** Requests per latency bucket (LATENCY_BUCKETS_MS, then one for above). */
  latency: number[];
  /** Reads of a cached route answered from the read cache (L1, L2 or stale). */
  cacheHits?: number;
  /** Reads of a cached route that looked in the read cache (hits and misses). */
  cacheLookups?: number;
}

export interface RefusalRow {
  hour: number;
  tokenId: string;
  policy: string;
  /** The operation refused; absent from batches of isolates older than this field. */
  route?: string;
  count: number;
}

/** Refusals of the tenant's platform key in one hour, by the platform's status (401, 403). */
export interface KeyRejectionRow {
  hour: number;
  status: number;
  count: number;
  /** The last one, ms. */
  at: number;
}

export interface UsageBatch {
  rows: UsageRow[];
  refusals: RefusalRow[];
  /** Absent from batches of isolates older than this field. */
  keyRejections?: KeyRejectionRow[];
  /** The requests themselves, for the tenant's recent requests (recent-requests.ts). */
  requests?: RequestRow[];
}

/** One finished request, as the request log sees it. */
export interface UsageEntry {
  at: number;
  tokenId: string;
  route: string;
  status: number;
  /** Units counted against the limits (0 when refused or not counted). */
  units: number;
  latencyMs: number;
  /** The policy that refused it, if one did. */
  refusedBy?: string;
  /** What the read cache did: a hit (L1, L2 or stale), a miss, or nothing (not looked). */
  cache?: 'hit' | 'miss';
  /** The platform refused the tenant's key: its status (401 or 403). */
  keyRejected?: number;
  /** The request itself, for the tenant's recent requests (recent-requests.ts). */
  request?: RequestRow;
}

/**
 * Requests a buffer keeps of each kind (answered below 400; refused or failed) until
 * its batch goes: the newest, so a flood is sampled, its counts kept in the rows.
 */
export const REQUESTS_PER_BATCH = 100;

export const hourOf = (t: number) => Math.floor(t / 3_600_000) * 3_600_000;

export function statusClass(status: number): StatusClass {
  if (status >= 500) return '5xx';
  if (status >= 400) return '4xx';
  if (status >= 300) return '3xx';
  return '2xx';
}

export function latencyBucket(ms: number): number {
  const i = LATENCY_BUCKETS_MS.findIndex((bound) => ms <= bound);
  return i === -1 ? LATENCY_BUCKETS_MS.length : i;
}

/** Most rows one tenant's buffer holds before it is sent whatever its age. */
const MAX_ROWS = 500;

export class UsageBuffer {
  private rows = new Map<string, UsageRow>();
  private refusals = new Map<string, RefusalRow>();
  private keyRejections = new Map<string, KeyRejectionRow>();
  private answered: RequestRow[] = [];
  private failed: RequestRow[] = [];
  /** When the oldest entry still waiting arrived (0: none waits). */
  oldestAt = 0;

  add(e: UsageEntry): void {
    const hour = hourOf(e.at);
    const status = statusClass(e.status);
    const key = `${hour}|${e.tokenId}|${e.route}|${status}`;
    let row = this.rows.get(key);
    if (!row) {
      row = {
        hour,
        tokenId: e.tokenId,
        route: e.route,
        status,
        requests: 0,
        units: 0,
        latency: [],
        cacheHits: 0,
        cacheLookups: 0,
      };
      row.latency = Array.from({ length: LATENCY_BUCKETS_MS.length + 1 }, () => 0);
      this.rows.set(key, row);
    }
    row.requests++;
    row.units += e.units;
    if (e.cache) {
      row.cacheLookups = (row.cacheLookups ?? 0) + 1;
      if (e.cache === 'hit') row.cacheHits = (row.cacheHits ?? 0) + 1;
    }
    const bucket = latencyBucket(e.latencyMs);
    row.latency[bucket] = (row.latency[bucket] ?? 0) + 1;
    if (e.refusedBy) {
      const rkey = `${hour}|${e.tokenId}|${e.refusedBy}|${e.route}`;
      const r = this.refusals.get(rkey) ?? {
        hour,
        tokenId: e.tokenId,
        policy: e.refusedBy,
        route: e.route,
        count: 0,
      };
      r.count++;
      this.refusals.set(rkey, r);
    }
    if (e.request) {
      const kept = e.request.status >= 400 ? this.failed : this.answered;
      kept.push(e.request);
      if (kept.length > REQUESTS_PER_BATCH) kept.shift();
    }
    if (e.keyRejected) {
      const kkey = `${hour}|${e.keyRejected}`;
      const k = this.keyRejections.get(kkey) ?? { hour, status: e.keyRejected, count: 0, at: 0 };
      k.count++;
      k.at = Math.max(k.at, e.at);
      this.keyRejections.set(kkey, k);
    }
    if (this.oldestAt === 0) this.oldestAt = e.at;
  }

  /** Whether the batch should go now: old enough, or large. */
  due(now: number): boolean {
    return (
      this.oldestAt !== 0 && (now - this.oldestAt >= USAGE_FLUSH_MS || this.rows.size >= MAX_ROWS)
    );
  }

  /** The waiting batch, emptied out of the buffer; undefined when nothing waits. */
  take(): UsageBatch | undefined {
    if (this.rows.size === 0 && this.refusals.size === 0) return undefined;
    const batch: UsageBatch = {
      rows: [...this.rows.values()],
      refusals: [...this.refusals.values()],
      ...(this.keyRejections.size > 0 ? { keyRejections: [...this.keyRejections.values()] } : {}),
      ...(this.answered.length + this.failed.length > 0
        ? { requests: [...this.answered, ...this.failed] }
        : {}),
    };
    this.rows = new Map();
    this.refusals = new Map();
    this.keyRejections = new Map();
    this.answered = [];
    this.failed = [];
    this.oldestAt = 0;
    return batch;
  }
}
