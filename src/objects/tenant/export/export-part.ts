/**
 * The part of a tenant's TenantGuard that follows its usage export (docs/BILLING.md): per
 * UTC day, the requests whose events the sink accepted, those dead-lettered and those
 * replayed, as the queue's consumer and replays report them, against the billable
 * requests the usage history counted; the difference is the backlog. In aggregate mode
 * it also sums the isolates' billable requests by minute, token and operation, and its
 * alarm produces one event for each once the minute is closed. Its tables:
 * `export_days` (kept as long as the history), `export_minutes` (two days).
 */
import { log } from '../../../log';
import type { MinuteRow } from '../../../metering/usage';
import type { UsageAggregate } from '../../../types/billing';
import type { ExportDay } from '../../../types/wire';
import type { HistoryPart } from '../history/history-part';
import type { TenantIo } from '../io';
import type { Chores } from '../part';
import type { Sql } from '../sql';

/**
 * A minute's sums go once it has been over this long: the isolates' batches reach the
 * guard within 10 s (USAGE_FLUSH_MS), a broker's within a few more. Requests of a
 * minute gone that come later make a revision of it (`rev` 1, 2, …).
 */
export const MINUTE_CLOSES_AFTER_MS = 60_000;
/** Sums kept after they went, to number late revisions. */
const MINUTES_KEPT_MS = 2 * 86_400_000;
/** Most aggregates one alarm produces (one sendBatch of the Queue takes 100). */
const AGGREGATES_PER_ALARM = 1000;

export interface ExportDeps {
  history: Pick<HistoryPart, 'billableByDay' | 'retentionDays'>;
  /** The plan the tenant is on (the limits part keeps it). */
  plan(): string | null;
  io: Pick<TenantIo, 'tenantId' | 'now' | 'wakeBy' | 'produceUsage'>;
}

/**
 * What callers reach: the consumer's and replay's reports, the console's status, and the
 * closed minutes' aggregates produced now (its alarm does it; `produceClosed(now)` with a
 * time of the caller's, as tests drive the alarm's other chores).
 */
export const EXPORT_CALLS = [
  'delivered',
  'deadLettered',
  'replayed',
  'status',
  'produceClosed',
] as const;

const DAY_MS = 86_400_000;

type MinuteSums = {
  minute: number;
  token_id: string;
  operation: string;
  rev: number;
  requests: number;
  cost: number;
  bytes: number;
  ms: number;
  errors: number;
};

type DayRow = {
  day: number;
  delivered: number;
  dead: number;
  replayed: number;
  last_at: number | null;
  lag_ms: number | null;
};

export class ExportPart implements Chores {
  constructor(
    private readonly sql: Sql,
    private readonly deps: ExportDeps,
  ) {
    sql.exec(`
      CREATE TABLE IF NOT EXISTS export_days (
        day INTEGER PRIMARY KEY, delivered INTEGER NOT NULL DEFAULT 0,
        dead INTEGER NOT NULL DEFAULT 0, replayed INTEGER NOT NULL DEFAULT 0,
        last_at INTEGER, lag_ms INTEGER);
      CREATE TABLE IF NOT EXISTS export_minutes (
        minute INTEGER NOT NULL, token_id TEXT NOT NULL, operation TEXT NOT NULL,
        rev INTEGER NOT NULL, requests INTEGER NOT NULL, cost INTEGER NOT NULL,
        bytes INTEGER NOT NULL, ms INTEGER NOT NULL, errors INTEGER NOT NULL,
        sent INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (minute, token_id, operation, rev));
    `);
  }

  /** Billable requests by minute from a usage batch (aggregate mode): added to the open sums. */
  takeMinutes(rows: MinuteRow[]): void {
    let due = Number.POSITIVE_INFINITY;
    for (const r of rows) {
      const last = this.sql
        .exec<{ rev: number; sent: number }>(
          `SELECT rev, sent FROM export_minutes WHERE minute = ? AND token_id = ? AND operation = ?
           ORDER BY rev DESC LIMIT 1`,
          r.minute,
          r.tokenId,
          r.operation,
        )
        .toArray()[0];
      // The open row of the minute, or a new one: the first, or a revision of one gone.
      const rev = !last ? 0 : last.sent ? last.rev + 1 : last.rev;
      this.sql.exec(
        `INSERT INTO export_minutes (minute, token_id, operation, rev, requests, cost, bytes, ms, errors)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (minute, token_id, operation, rev) DO UPDATE SET
           requests = requests + excluded.requests, cost = cost + excluded.cost,
           bytes = bytes + excluded.bytes, ms = ms + excluded.ms, errors = errors + excluded.errors`,
        r.minute,
        r.tokenId,
        r.operation,
        rev,
        r.requests,
        r.cost,
        r.bytes,
        r.ms,
        r.errors,
      );
      due = Math.min(due, r.minute + MINUTE_CLOSES_AFTER_MS + 60_000);
    }
    // A revision of a minute long closed goes with the next alarm.
    if (Number.isFinite(due)) this.deps.io.wakeBy(Math.max(due, this.deps.io.now()));
  }

  /** The closed minutes' aggregates, produced as of `now`; when the alarm is wanted again. */
  produceClosed(now: number): Promise<number> {
    return this.catchUp(now);
  }

  /**
   * Produces the closed minutes' sums to the export's queue, one aggregate each; when the
   * alarm is wanted again (the next minute to close).
   */
  async catchUp(now: number): Promise<number> {
    const { io } = this.deps;
    // A guard not yet told its tenant produces nothing; a later usage batch wakes it again.
    if (!io.tenantId) return Number.POSITIVE_INFINITY;
    const closed = now - MINUTE_CLOSES_AFTER_MS - 60_000;
    const rows = this.sql
      .exec<MinuteSums>(
        `SELECT * FROM export_minutes WHERE sent = 0 AND minute <= ? ORDER BY minute LIMIT ?`,
        closed,
        AGGREGATES_PER_ALARM,
      )
      .toArray();
    // Taken in the same step as read, before the queue is awaited (other calls run then):
    // a request of the minute arriving meanwhile opens the next revision instead of joining
    // sums already on their way, and a second catch-up at once does not produce them again.
    const markSent = (sent: 0 | 1) => {
      for (const r of rows) {
        this.sql.exec(
          'UPDATE export_minutes SET sent = ? WHERE minute = ? AND token_id = ? AND operation = ? AND rev = ?',
          sent,
          r.minute,
          r.token_id,
          r.operation,
          r.rev,
        );
      }
    };
    markSent(1);
    if (rows.length > 0) {
      const tenant = io.tenantId;
      const plan = this.deps.plan();
      const aggregates = rows.map(
        (r): UsageAggregate => ({
          kind: 'aggregate',
          tenant,
          token: r.token_id,
          op: r.operation,
          minute: r.minute,
          rev: r.rev,
          plan,
          requests: r.requests,
          cost: r.cost,
          bytes: r.bytes,
          ms: r.ms,
          errors: r.errors,
        }),
      );
      try {
        await io.produceUsage(aggregates);
      } catch (err) {
        // Not produced (no queue, or it failed): unmarked, and tried again a minute later.
        log.error('usage.aggregates_not_sent', {
          tenant_id: tenant,
          aggregates: aggregates.length,
          error: err instanceof Error ? err.message.slice(0, 200) : 'unknown',
        });
        markSent(0);
        return now + 60_000;
      }
    }
    const next = this.sql
      .exec<{ at: number | null }>('SELECT MIN(minute) AS at FROM export_minutes WHERE sent = 0')
      .one().at;
    if (rows.length === AGGREGATES_PER_ALARM) return now;
    return next === null ? Number.POSITIVE_INFINITY : next + MINUTE_CLOSES_AFTER_MS + 60_000;
  }

  /** The sink accepted `count` events of `day`, the oldest made at `oldestAt`, at `at`. */
  delivered(day: number, count: number, oldestAt: number, at: number): void {
    this.sql.exec(
      `INSERT INTO export_days (day, delivered, last_at, lag_ms) VALUES (?, ?, ?, ?)
       ON CONFLICT (day) DO UPDATE SET delivered = delivered + excluded.delivered,
         last_at = excluded.last_at, lag_ms = excluded.lag_ms`,
      dayOf(day),
      count,
      at,
      Math.max(0, at - oldestAt),
    );
  }

  /** `count` events of `day` went to the dead-letter queue after their retries. */
  deadLettered(day: number, count: number): void {
    this.sql.exec(
      `INSERT INTO export_days (day, dead) VALUES (?, ?)
       ON CONFLICT (day) DO UPDATE SET dead = dead + excluded.dead`,
      dayOf(day),
      count,
    );
  }

  /** A replay sent `count` events of `day`; `recovered` of them were dead letters. */
  replayed(day: number, count: number, recovered: number): void {
    this.sql.exec(
      `INSERT INTO export_days (day, replayed) VALUES (?, ?)
       ON CONFLICT (day) DO UPDATE SET replayed = replayed + excluded.replayed,
         dead = MAX(0, dead - ?), delivered = delivered + ?`,
      dayOf(day),
      count,
      recovered,
      recovered,
    );
  }

  /** The export's state for the days from `from` to `to` (any time in them), newest first. */
  status(from: number, to: number): ExportDay[] {
    const first = dayOf(from);
    const last = dayOf(to);
    const billable = this.deps.history.billableByDay(first, last);
    const rows = new Map(
      this.sql
        .exec<DayRow>('SELECT * FROM export_days WHERE day >= ? AND day <= ?', first, last)
        .toArray()
        .map((r) => [r.day, r]),
    );
    const days: ExportDay[] = [];
    for (let day = last; day >= first; day -= DAY_MS) {
      const row = rows.get(day);
      const owed = billable.get(day) ?? 0;
      if (!row && owed === 0) continue;
      const delivered = row?.delivered ?? 0;
      const dead = row?.dead ?? 0;
      days.push({
        day: new Date(day).toISOString().slice(0, 10),
        billable: owed,
        delivered,
        dead,
        replayed: row?.replayed ?? 0,
        backlog: Math.max(0, owed - delivered - dead),
        lag_ms: row?.lag_ms ?? null,
        last_delivered_at: row?.last_at ? new Date(row.last_at).toISOString() : null,
      });
    }
    return days;
  }

  /** Days older than the history's retention; sums that went two days ago. */
  sweep(now: number): void {
    const before = dayOf(now) - this.deps.history.retentionDays() * DAY_MS;
    this.sql.exec('DELETE FROM export_days WHERE day < ?', before);
    this.sql.exec(
      'DELETE FROM export_minutes WHERE sent = 1 AND minute < ?',
      now - MINUTES_KEPT_MS,
    );
  }
}

/** The start of the UTC day `t` falls in. */
export const dayOf = (t: number) => Math.floor(t / DAY_MS) * DAY_MS;
