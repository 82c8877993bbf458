/**
 * The history part's hourly figures beyond the rollups (history-part.ts): the
 * platform refusing the tenant's key (401 or 403, counted per hour and status, in
 * `key_rejections_hourly`), and the tenant's figures by hour (requests, limiter
 * refusals, client and server errors, a latency histogram, key refusals) from which the
 * alerts part raises the alerts beyond quotas and the guard reports to its fleet board
 * (docs/OBSERVABILITY.md, "Alerts").
 */
import { type KeyRejectionRow, LATENCY_COLUMNS } from '../../../metering/usage';
import type { FleetHour } from '../../fleet/fleet-board';
import type { Sql } from '../sql';

export function migrateKeyRejections(sql: Sql): void {
  sql.exec(`
    CREATE TABLE IF NOT EXISTS key_rejections_hourly (
      hour INTEGER NOT NULL, status INTEGER NOT NULL, count INTEGER NOT NULL,
      last_at INTEGER NOT NULL, PRIMARY KEY (hour, status));
  `);
}

export function recordKeyRejections(sql: Sql, rows: KeyRejectionRow[]): void {
  for (const r of rows) {
    sql.exec(
      `INSERT INTO key_rejections_hourly (hour, status, count, last_at) VALUES (?, ?, ?, ?)
       ON CONFLICT (hour, status) DO UPDATE SET count = count + excluded.count,
         last_at = MAX(last_at, excluded.last_at)`,
      r.hour,
      r.status,
      r.count,
      r.at,
    );
  }
}

/** The key's refusals in one hour (its start, ms), by status. */
export function keyRejectionsIn(sql: Sql, hour: number): { status: number; count: number }[] {
  return sql
    .exec<{ status: number; count: number }>(
      'SELECT status, count FROM key_rejections_hourly WHERE hour = ?',
      hour,
    )
    .toArray();
}

/** The tenant's figures by hour since `from` (an hour's start), oldest first. */
export function hourFigures(sql: Sql, from: number): FleetHour[] {
  const hours = new Map<number, FleetHour>();
  const at = (hour: number) => {
    let h = hours.get(hour);
    if (!h) {
      h = {
        hour,
        requests: 0,
        self_service: 0,
        refused: 0,
        errors_5xx: 0,
        errors_4xx: 0,
        latency: LATENCY_COLUMNS.map(() => 0),
        key_rejected: 0,
        key_status: null,
      };
      hours.set(hour, h);
    }
    return h;
  };
  for (const r of sql.exec<Record<string, number>>(
    `SELECT hour, SUM(requests) AS requests, SUM(self_service) AS self,
       SUM(CASE WHEN status = '5xx' THEN requests ELSE 0 END) AS errors,
       SUM(CASE WHEN status = '4xx' THEN requests ELSE 0 END) AS client_errors,
       ${LATENCY_COLUMNS.map((c) => `SUM(${c}) AS ${c}`).join(', ')}
     FROM usage_hourly WHERE hour >= ? GROUP BY hour`,
    from,
  )) {
    const h = at(r.hour ?? 0);
    // Data requests and self-service ones apart (docs/BILLING.md, "What is billable").
    h.self_service = r.self ?? 0;
    h.requests = (r.requests ?? 0) - h.self_service;
    h.errors_5xx = r.errors ?? 0;
    h.errors_4xx = r.client_errors ?? 0;
    h.latency = LATENCY_COLUMNS.map((c) => r[c] ?? 0);
  }
  for (const r of sql.exec<{ hour: number; n: number }>(
    'SELECT hour, SUM(count) AS n FROM refusals_hourly WHERE hour >= ? GROUP BY hour',
    from,
  )) {
    at(r.hour).refused = r.n;
  }
  for (const r of sql.exec<{ hour: number; status: number; count: number }>(
    'SELECT hour, status, count FROM key_rejections_hourly WHERE hour >= ? ORDER BY last_at',
    from,
  )) {
    const h = at(r.hour);
    h.key_rejected += r.count;
    // The status of the latest refusal of the hour.
    h.key_status = r.status;
  }
  return [...hours.values()].sort((a, b) => a.hour - b.hour);
}

/** Drops key refusals older than `before` (with the rollups). */
export function sweepKeyRejections(sql: Sql, before: number): void {
  sql.exec('DELETE FROM key_rejections_hourly WHERE hour < ?', before);
}
