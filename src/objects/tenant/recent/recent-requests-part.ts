/**
 * The part of a tenant's TenantGuard that keeps its requests (docs/OBSERVABILITY.md,
 * "Recent requests"): one row per request an isolate handed over in its usage batches
 * (never on the request path), bounded to the newest RECENT_KEPT answered below 400 and
 * the newest RECENT_KEPT refused or failed, and to RECENT_HOURS (7 days), so a flood of
 * successes never pushes out the 429 a partner is asking about. Any time range within
 * them can be read, newest first (the console's request explorer). Rows hold ids, codes
 * and timings only: no body, no query, no header, no secret. Its table: `recent_requests`.
 */
import type { RequestRow } from '../../../metering/usage';
import type { RecentRequest } from '../../../types/wire';
import type { Chores, Clock } from '../part';
import type { Sql, SqlValue } from '../sql';

/** Rows kept of each kind (below 400; 400 and above). */
export const RECENT_KEPT = 20_000;
/** Hours a row is kept: 7 days. */
export const RECENT_HOURS = 7 * 24;
const HOUR_MS = 3_600_000;

export type { RequestRow };

export interface RecentQuery {
  requestId?: string;
  tokenId?: string;
  /** An HTTP status, or a class (`4xx`). */
  status?: number | '2xx' | '3xx' | '4xx' | '5xx';
  operation?: string;
  /** Only refused and failed requests (status 400 and above): the partner's view. */
  failedOnly?: boolean;
  /** The range asked (ms, both ends included); by default all that is kept. */
  from?: number;
  to?: number;
  /** Rows after this one in the order answered (from an earlier page's cursor). */
  before?: RecentCursor;
  limit: number;
}

/** Where a page ended: its last row's time and sequence number. */
export interface RecentCursor {
  at: number;
  seq: number;
}

type Row = Record<string, SqlValue> & RequestRow & { seq: number; failed: number; kseq: number };

/** What callers reach: the query (the operator API, a tenant's own view). */
export const RECENT_REQUESTS_CALLS = ['query'] as const;

export class RecentRequestsPart implements Chores {
  constructor(
    private readonly sql: Sql,
    private readonly now: Clock,
  ) {
    sql.exec(`
      CREATE TABLE IF NOT EXISTS recent_requests (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, request_id TEXT NOT NULL,
        token_id TEXT NOT NULL, operation TEXT NOT NULL, method TEXT NOT NULL,
        status INTEGER NOT NULL, failed INTEGER NOT NULL, code INTEGER, limiter TEXT, policy TEXT,
        cache TEXT, upstream_status INTEGER, upstream_attempts INTEGER, latency_ms INTEGER NOT NULL,
        upstream_ms INTEGER, trace_id TEXT, via TEXT, kseq INTEGER NOT NULL DEFAULT 0);
      CREATE INDEX IF NOT EXISTS recent_by_id ON recent_requests (request_id);
    `);
    const columns = sql.exec<{ name: string }>('PRAGMA table_info(recent_requests)').toArray();
    // A table from before MCP tool calls (issue 44) gains their mark.
    if (!columns.some((c) => c.name === 'via')) {
      sql.exec('ALTER TABLE recent_requests ADD COLUMN via TEXT');
    }
    // A table from before the explorer: each kind's own sequence (its rows' global
    // sequence numbers keep their order), by which the kind is cut to RECENT_KEPT.
    if (!columns.some((c) => c.name === 'kseq')) {
      sql.exec(`
        ALTER TABLE recent_requests ADD COLUMN kseq INTEGER NOT NULL DEFAULT 0;
        UPDATE recent_requests SET kseq = seq;
        DROP INDEX IF EXISTS recent_by_kind;
      `);
    }
    sql.exec(`
      CREATE INDEX IF NOT EXISTS recent_by_kseq ON recent_requests (failed, kseq);
      CREATE INDEX IF NOT EXISTS recent_by_at ON recent_requests (at, seq);
    `);
  }

  /**
   * Adds a usage batch's rows (oldest first), then drops what is past RECENT_KEPT of each
   * kind: each kind numbers its rows (kseq), so the cut reads only the rows it deletes.
   * Rows past RECENT_HOURS are left out of answers, and swept by the alarm.
   */
  take(rows: RequestRow[]): void {
    if (rows.length === 0) return;
    const next: [number, number] = [this.lastOfKind(0) + 1, this.lastOfKind(1) + 1];
    for (const r of [...rows].sort((a, b) => a.at - b.at)) {
      const failed: 0 | 1 = r.status >= 400 ? 1 : 0;
      this.sql.exec(
        `INSERT INTO recent_requests (at, request_id, token_id, operation, method, status, failed,
           code, limiter, policy, cache, upstream_status, upstream_attempts, latency_ms, upstream_ms,
           trace_id, via, kseq)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        r.at,
        r.request_id.slice(0, 200),
        r.token_id,
        r.operation,
        r.method,
        r.status,
        failed,
        r.code,
        r.limiter,
        r.policy,
        r.cache,
        r.upstream_status,
        r.upstream_attempts,
        r.latency_ms,
        r.upstream_ms,
        r.trace_id,
        r.via ?? null,
        next[failed]++,
      );
    }
    for (const failed of [0, 1] as const) {
      const cut = next[failed] - 1 - RECENT_KEPT;
      if (cut > 0) {
        this.sql.exec('DELETE FROM recent_requests WHERE failed = ? AND kseq <= ?', failed, cut);
      }
    }
  }

  /** The last number a kind gave a row (0: none). */
  private lastOfKind(failed: number): number {
    return this.sql
      .exec<{ k: number }>(
        'SELECT COALESCE(MAX(kseq), 0) AS k FROM recent_requests WHERE failed = ?',
        failed,
      )
      .one().k;
  }

  /** Rows past RECENT_HOURS (the alarm, hourly). */
  sweep(now: number): void {
    this.sql.exec('DELETE FROM recent_requests WHERE at < ?', now - RECENT_HOURS * HOUR_MS);
  }

  /**
   * Newest first (by time, then by arrival), filtered, within the range asked and what is
   * kept; the cursor of the next page (null: none).
   */
  query(q: RecentQuery): {
    requests: Omit<RecentRequest, 'reason'>[];
    cursor: RecentCursor | null;
  } {
    const where: string[] = [];
    const args: SqlValue[] = [];
    const add = (clause: string, ...values: SqlValue[]) => {
      where.push(clause);
      args.push(...values);
    };
    add('at >= ?', Math.max(q.from ?? 0, this.now() - RECENT_HOURS * HOUR_MS));
    if (q.to !== undefined) add('at <= ?', q.to);
    if (q.requestId !== undefined) add('request_id = ?', q.requestId);
    if (q.tokenId !== undefined) add('token_id = ?', q.tokenId);
    if (q.operation !== undefined) add('operation = ?', q.operation);
    if (typeof q.status === 'number') add('status = ?', q.status);
    else if (q.status !== undefined) {
      const low = Number(q.status[0]) * 100;
      add('status >= ? AND status < ?', low, low + 100);
    }
    if (q.failedOnly) add('failed = 1');
    if (q.before !== undefined) {
      add('(at < ? OR (at = ? AND seq < ?))', q.before.at, q.before.at, q.before.seq);
    }
    const rows = this.sql
      .exec<Row>(
        `SELECT * FROM recent_requests WHERE ${where.join(' AND ')}
         ORDER BY at DESC, seq DESC LIMIT ?`,
        ...args,
        q.limit + 1,
      )
      .toArray();
    const page = rows.slice(0, q.limit);
    const last = page[page.length - 1];
    return {
      requests: page.map(({ seq: _seq, failed: _failed, kseq: _kseq, at, via, ...r }) => ({
        ...r,
        at: new Date(at).toISOString(),
        via: via === 'mcp' ? 'mcp' : null,
      })),
      cursor: rows.length > q.limit && last ? { at: last.at, seq: last.seq } : null,
    };
  }
}
