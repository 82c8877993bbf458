/**
 * Per-request counts read from the gateway itself: `GET /admin/stats` (operator
 * token) answers the counters of the isolate that served it, since it started:
 * `{"code":0,"data":{"isolate":{"requests":N,"kv_reads":N,"cache_api_calls":N,"guard_calls":N}}}`.
 * The bench reads them between rounds; a gateway without the endpoint (404 /
 * 40400) gets a note instead, and the report prints n/a.
 */

import type { CountedWork } from '../../src/stats';
import { adminClient } from '../../ui/lib/admin-client';

/** The gateway's counters (src/stats.ts) the bench reports per request; a renamed one fails typecheck. */
export const COUNTERS = [
  'requests',
  'kv_reads',
  'cache_api_calls',
  'guard_calls',
  'limit_refusals',
  'limit_refusals_asked',
] as const satisfies readonly CountedWork[];
export type Counter = (typeof COUNTERS)[number];
export type Counts = Record<Counter, number>;

export function zeroCounts(): Counts {
  return Object.fromEntries(COUNTERS.map((c) => [c, 0])) as Counts;
}

export function minus(a: Counts, b: Counts): Counts {
  const out = zeroCounts();
  for (const name of COUNTERS) out[name] = a[name] - b[name];
  return out;
}

/** The isolate's counters, or a short reason why not. */
export async function readIsolateStats(
  baseUrl: string,
  adminToken: string,
): Promise<Counts | string> {
  let res: Response;
  try {
    const admin = adminClient(baseUrl, { headers: { authorization: `Bearer ${adminToken}` } });
    res = await admin.stats.$get();
  } catch (err) {
    return `GET /admin/stats failed: ${(err as Error).message}`;
  }
  const text = await res.text();
  let body: { code?: unknown; data?: { isolate?: Record<string, unknown> } };
  try {
    body = JSON.parse(text);
  } catch {
    return res.status === 404
      ? 'no GET /admin/stats (404)'
      : `GET /admin/stats: HTTP ${res.status}, not JSON`;
  }
  if (res.status === 404 || body.code === 40400) return 'no GET /admin/stats (404)';
  const isolate = body.data?.isolate;
  if (res.status !== 200 || body.code !== 0 || !isolate || typeof isolate !== 'object')
    return `GET /admin/stats: HTTP ${res.status}, code ${String(body.code)}`;
  const counts = zeroCounts();
  for (const name of COUNTERS) {
    const value = isolate[name];
    if (typeof value !== 'number' || !Number.isFinite(value))
      return `GET /admin/stats: data.isolate.${name} is not a number`;
    counts[name] = value;
  }
  return counts;
}

/**
 * One gateway's counters, read between rounds: `delta()` is the change since
 * the previous read, less what a read of /admin/stats adds by itself
 * (measured by `start()` with back-to-back reads).
 */
export class IsolateStats {
  /** Why there are no counts (endpoint missing, new isolate, …); undefined while they work. */
  note?: string;
  private last?: Counts;
  private selfCost?: Counts;

  constructor(
    private readonly baseUrl: string,
    private readonly adminToken: string,
  ) {}

  /** Three reads back to back: the last two differ only by one read. */
  async start(): Promise<void> {
    const reads: Counts[] = [];
    for (let i = 0; i < 3; i++) {
      const counts = await readIsolateStats(this.baseUrl, this.adminToken);
      if (typeof counts === 'string') {
        this.note = counts;
        return;
      }
      reads.push(counts);
    }
    this.selfCost = minus(reads[2]!, reads[1]!);
    this.last = reads[2]!;
  }

  /** The counters' change since the previous read, or why there is none. */
  async delta(): Promise<Counts | string> {
    if (this.note) return this.note;
    if (!this.last || !this.selfCost) return 'stats not started';
    const now = await readIsolateStats(this.baseUrl, this.adminToken);
    if (typeof now === 'string') {
      this.note = now;
      return now;
    }
    const raw = minus(now, this.last);
    this.last = now;
    // A counter that went backwards means another isolate answered (a restart or an eviction).
    if (COUNTERS.some((name) => raw[name] < 0)) {
      this.note = 'counters went backwards (a new isolate answered)';
      return this.note;
    }
    return minus(raw, this.selfCost);
  }
}
