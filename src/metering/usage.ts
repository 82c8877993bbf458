/**
 * Usage history rows, as isolates hand them to their tenant's TenantGuard
 * (limits/usage-buffer.ts gathers them, objects/tenant/history/ keeps them): hourly
 * rollups per token, operation and status class (requests, units counted, a
 * latency histogram) and refusals per policy (docs/OBSERVABILITY.md, "Usage
 * history").
 */

import type { RecentRequest } from '../types/wire';

export const HOUR_MS = 3_600_000;

/** The start of the hour `t` falls in: the key of the hourly rows. */
export const hourOf = (t: number) => Math.floor(t / HOUR_MS) * HOUR_MS;

/** How long usage history is kept unless USAGE_RETENTION_DAYS says otherwise. */
export const DEFAULT_USAGE_RETENTION_DAYS = 90;

/** Upper bounds of the latency buckets, in ms; the last bucket is everything above. */
export const LATENCY_BUCKETS_MS = [5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000] as const;

/** The columns a latency histogram is stored in (one per bucket, and one for above): lat0 … lat11. */
export const LATENCY_COLUMNS = Array.from(
  { length: LATENCY_BUCKETS_MS.length + 1 },
  (_, i) => `lat${i}`,
);

/**
 * The upper bound of the latency bucket where the cumulative count reaches `p` (0.95:
 * the 95th percentile) of a histogram by LATENCY_BUCKETS_MS; null when it has no count,
 * or when that bucket is the last (above 10 s).
 */
export function percentile(counts: readonly number[], p: number): number | null {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  let seen = 0;
  for (let i = 0; i < counts.length; i++) {
    seen += counts[i] ?? 0;
    if (seen >= p * total) return LATENCY_BUCKETS_MS[i] ?? null;
  }
  return null;
}

export type StatusClass = '2xx' | '3xx' | '4xx' | '5xx';

export interface UsageRow {
  /** Start of the hour, ms since the epoch. */
  hour: number;
  tokenId: string;
  /** The operation id: `route` on the wire, in storage and in GET /usage's `group_by`. */
  route: string;
  status: StatusClass;
  requests: number;
  units: number;
  /** Requests per latency bucket (LATENCY_BUCKETS_MS, then one for above). */
  latency: number[];
  /** Reads of a cached operation answered from the read cache (L1, L2 or stale). */
  cacheHits?: number;
  /** Reads of a cached operation that looked in the read cache (hits and misses). */
  cacheLookups?: number;
  /**
   * Billable requests among them (metering/billable.ts): admitted data requests. Absent
   * from batches of isolates older than this field.
   */
  billable?: number;
  /** Self-service requests among them (the token reading or rotating itself, MCP discovery). */
  selfService?: number;
}

/** A meter's slot that admitted requests were counted in (a lease's or the guard's). */
export interface MeterCharge {
  /** The meter's key (`rate:burst`, `quota:daily`, `self:<token>` …). */
  meter: string;
  /** The slot's start, ms: the slot the units were leased or admitted in. */
  slot: number;
}

/**
 * Units admitted requests spent, per meter and slot: what the TenantGuard shows as `used`
 * (units merely leased are `reserved`; docs/LIMITS.md, "Counting").
 */
export interface SpentRow extends MeterCharge {
  units: number;
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

/**
 * One request as an isolate hands it over, for the tenant's recent requests
 * (objects/tenant/recent/recent-requests-part.ts): what the API shows of it, with its time in ms and
 * without the reason (said when it is read).
 */
export type RequestRow = Omit<RecentRequest, 'at' | 'reason' | 'via'> & {
  at: number;
  via?: RecentRequest['via'];
};

/**
 * One token's billable requests of one operation in one minute, for the usage export's
 * aggregate mode (objects/tenant/export/): sums only.
 */
export interface MinuteRow {
  /** The minute's start, ms. */
  minute: number;
  tokenId: string;
  operation: string;
  requests: number;
  cost: number;
  bytes: number;
  /** Duration in the gateway, ms, summed. */
  ms: number;
  /** Requests answered 400 or above. */
  errors: number;
}

export interface UsageBatch {
  rows: UsageRow[];
  refusals: RefusalRow[];
  /** Absent from batches of isolates older than this field. */
  keyRejections?: KeyRejectionRow[];
  /** The requests themselves (at most the newest of each kind; limits/usage-buffer.ts). */
  requests?: RequestRow[];
  /** Units the batch's admitted requests spent, per meter and slot. */
  spent?: SpentRow[];
  /** Billable requests by minute, token and operation (USAGE_EXPORT=aggregate). */
  minutes?: MinuteRow[];
}

export function statusClass(status: number): StatusClass {
  if (status >= 500) return '5xx';
  if (status >= 400) return '4xx';
  if (status >= 300) return '3xx';
  return '2xx';
}

/**
 * The newest `kept` requests of each kind (answered below 400; refused or failed),
 * in the order they came: a flood is sampled, its counts kept in the rows. Adding
 * is O(1); nothing is sorted.
 */
export class RequestSample {
  private answered: RequestRow[] = [];
  private failed: RequestRow[] = [];

  constructor(private readonly kept: number) {}

  add(row: RequestRow): void {
    const list = row.status >= 400 ? this.failed : this.answered;
    list.push(row);
    if (list.length > this.kept) list.shift();
  }

  get size(): number {
    return this.answered.length + this.failed.length;
  }

  /** What it holds, emptied out. */
  take(): RequestRow[] {
    const out = [...this.answered, ...this.failed];
    this.answered = [];
    this.failed = [];
    return out;
  }
}
