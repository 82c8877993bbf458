/**
 * Usage history, as an isolate gathers it (the rows: metering/usage.ts).
 * Isolates aggregate locally and hand a batch to their tenant's TenantGuard
 * with their next lease call, or at least every USAGE_FLUSH_MS; an isolate
 * that dies loses at most its unsent batch (docs/OBSERVABILITY.md, "Usage
 * history").
 */
import {
  hourOf,
  type KeyRejectionRow,
  LATENCY_BUCKETS_MS,
  type MeterCharge,
  type MinuteRow,
  type RefusalRow,
  type RequestRow,
  RequestSample,
  type SpentRow,
  statusClass,
  type UsageBatch,
  type UsageRow,
} from '../metering/usage';

/** A batch waits at most this long for a lease call before it is sent on its own. */
export const USAGE_FLUSH_MS = 10_000;

/** One finished request, as the request log sees it. */
export interface UsageEntry {
  at: number;
  tokenId: string;
  /** The operation id (`team.list`), `unmatched` for an unknown path. */
  operation: string;
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
  /** The request itself, for the tenant's recent requests (objects/tenant/recent/). */
  request?: RequestRow;
  /** A billable request (metering/billable.ts): an admitted data request. */
  billable?: boolean;
  /** A self-service request: the token reading or rotating itself, MCP discovery. */
  selfService?: boolean;
  /** Admitted: the units it spent and the meters' slots they were counted in. */
  spent?: { units: number; charges: readonly MeterCharge[] };
  /** A billable request's figures, summed by minute (USAGE_EXPORT=aggregate). */
  sums?: { cost: number; bytes: number };
}

/**
 * Requests a buffer keeps of each kind (answered below 400; refused or failed) until
 * its batch goes: the newest, so a flood is sampled, its counts kept in the rows.
 */
export const REQUESTS_PER_BATCH = 100;

function latencyBucket(ms: number): number {
  const i = LATENCY_BUCKETS_MS.findIndex((bound) => ms <= bound);
  return i === -1 ? LATENCY_BUCKETS_MS.length : i;
}

/** The map's entry at `key`, made by `fresh` and added where there is none yet. */
function entryOf<V>(map: Map<string, V>, key: string, fresh: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = fresh();
    map.set(key, value);
  }
  return value;
}

/** Most rows one tenant's buffer holds before it is sent whatever its age. */
const MAX_ROWS = 500;

export class UsageBuffer {
  private rows = new Map<string, UsageRow>();
  private refusals = new Map<string, RefusalRow>();
  private keyRejections = new Map<string, KeyRejectionRow>();
  private spent = new Map<string, SpentRow>();
  private minutes = new Map<string, MinuteRow>();
  private readonly requests = new RequestSample(REQUESTS_PER_BATCH);
  /** When the oldest entry still waiting arrived (0: none waits). */
  oldestAt = 0;

  add(e: UsageEntry): void {
    const hour = hourOf(e.at);
    const status = statusClass(e.status);
    const key = `${hour}|${e.tokenId}|${e.operation}|${status}`;
    const row = entryOf(this.rows, key, () => ({
      hour,
      tokenId: e.tokenId,
      route: e.operation,
      status,
      requests: 0,
      units: 0,
      latency: Array.from({ length: LATENCY_BUCKETS_MS.length + 1 }, () => 0),
      cacheHits: 0,
      cacheLookups: 0,
    }));
    row.requests++;
    row.units += e.units;
    if (e.billable) row.billable = (row.billable ?? 0) + 1;
    if (e.selfService) row.selfService = (row.selfService ?? 0) + 1;
    if (e.spent && e.spent.units > 0) {
      for (const { meter, slot } of e.spent.charges) {
        const skey = `${meter}|${slot}`;
        const spent = this.spent.get(skey);
        if (spent) spent.units += e.spent.units;
        else this.spent.set(skey, { meter, slot, units: e.spent.units });
      }
    }
    if (e.cache) {
      row.cacheLookups = (row.cacheLookups ?? 0) + 1;
      if (e.cache === 'hit') row.cacheHits = (row.cacheHits ?? 0) + 1;
    }
    const bucket = latencyBucket(e.latencyMs);
    row.latency[bucket] = (row.latency[bucket] ?? 0) + 1;
    if (e.refusedBy) {
      const rkey = `${hour}|${e.tokenId}|${e.refusedBy}|${e.operation}`;
      const policy = e.refusedBy;
      const r = entryOf(this.refusals, rkey, () => ({
        hour,
        tokenId: e.tokenId,
        policy,
        route: e.operation,
        count: 0,
      }));
      r.count++;
    }
    if (e.sums) this.addMinute(e, e.sums);
    if (e.request) this.requests.add(e.request);
    if (e.keyRejected) {
      const kkey = `${hour}|${e.keyRejected}`;
      const keyStatus = e.keyRejected;
      const k = entryOf(this.keyRejections, kkey, () => ({
        hour,
        status: keyStatus,
        count: 0,
        at: 0,
      }));
      k.count++;
      k.at = Math.max(k.at, e.at);
    }
    if (this.oldestAt === 0) this.oldestAt = e.at;
  }

  private addMinute(e: UsageEntry, sums: { cost: number; bytes: number }): void {
    const minute = Math.floor(e.at / 60_000) * 60_000;
    const key = `${minute}|${e.tokenId}|${e.operation}`;
    const m = entryOf(this.minutes, key, () => ({
      minute,
      tokenId: e.tokenId,
      operation: e.operation,
      requests: 0,
      cost: 0,
      bytes: 0,
      ms: 0,
      errors: 0,
    }));
    m.requests++;
    m.cost += sums.cost;
    m.bytes += sums.bytes;
    m.ms += e.latencyMs;
    if (e.status >= 400) m.errors++;
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
      ...(this.requests.size > 0 ? { requests: this.requests.take() } : {}),
      ...(this.spent.size > 0 ? { spent: [...this.spent.values()] } : {}),
      ...(this.minutes.size > 0 ? { minutes: [...this.minutes.values()] } : {}),
    };
    this.rows = new Map();
    this.refusals = new Map();
    this.keyRejections = new Map();
    this.spent = new Map();
    this.minutes = new Map();
    this.oldestAt = 0;
    return batch;
  }
}
