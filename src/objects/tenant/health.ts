/**
 * A tenant's health as its TenantGuard sees it in the usage batches: the
 * platform refusing its key (401 or 403, counted per hour and status), and its
 * hourly figures (requests, limiter refusals, server errors), from which it
 * raises the alerts beyond quotas (alerts.ts) and reports to its fleet board
 * (fleet-board.ts) for the console's overview (docs/OBSERVABILITY.md, "Alerts").
 */

import { HOUR_MS, hourOf, type KeyRejectionRow } from '../../metering/usage';
import type { FleetHour } from '../fleet/fleet-board';
import { type AlertConfig, DEFAULT_SERVER_ERROR_PERCENT, firstTime, raiseAlert } from './alerts';
import type { Sql } from './sql';

export type { FleetHour };

/** An hour needs this many requests before its share of server errors counts. */
export const SERVER_ERROR_MIN_REQUESTS = 20;

export function migrateHealth(sql: Sql): void {
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

/** The tenant's figures by hour since `from` (an hour's start), oldest first. */
export function hourFigures(sql: Sql, from: number): FleetHour[] {
  const hours = new Map<number, FleetHour>();
  const at = (hour: number) => {
    let h = hours.get(hour);
    if (!h) {
      h = { hour, requests: 0, refused: 0, errors_5xx: 0, key_rejected: 0, key_status: null };
      hours.set(hour, h);
    }
    return h;
  };
  for (const r of sql.exec<{ hour: number; requests: number; errors: number }>(
    `SELECT hour, SUM(requests) AS requests,
       SUM(CASE WHEN status = '5xx' THEN requests ELSE 0 END) AS errors
     FROM usage_hourly WHERE hour >= ? GROUP BY hour`,
    from,
  )) {
    const h = at(r.hour);
    h.requests = r.requests;
    h.errors_5xx = r.errors;
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

/**
 * Raises the alerts beyond quotas of the hours named (hour starts, ms: those a batch
 * brought failures for, which may be the hour before the one it came in), each once
 * an hour: the platform refused the key (once per status), and server errors other
 * than those refusals reached the configured share of the hour's requests (at least
 * SERVER_ERROR_MIN_REQUESTS). Raised without a webhook too: the console shows the
 * alert log. True when one waits for delivery.
 */
export function noteHealthAlerts(
  sql: Sql,
  tenantId: string,
  config: AlertConfig | null,
  hours: Iterable<number>,
  now: number,
): boolean {
  let raised = false;
  for (const hour of hours) {
    if (noteHour(sql, tenantId, config, hourOf(hour), now)) raised = true;
  }
  return raised && config !== null;
}

function noteHour(
  sql: Sql,
  tenantId: string,
  config: AlertConfig | null,
  hour: number,
  now: number,
): boolean {
  const period = {
    period_start: new Date(hour).toISOString(),
    period_end: new Date(hour + HOUR_MS).toISOString(),
    sent_at: new Date(now).toISOString(),
  };
  let raised = false;
  for (const r of sql.exec<{ status: number; count: number }>(
    'SELECT status, count FROM key_rejections_hourly WHERE hour = ?',
    hour,
  )) {
    if (!firstTime(sql, 'platform_key', hour, r.status)) continue;
    raiseAlert(
      sql,
      config,
      {
        kind: 'platform_key_rejected',
        tenant_id: tenantId,
        upstream_status: r.status,
        count: r.count,
        ...period,
      },
      now,
    );
    raised = true;
  }
  const figures = hourFigures(sql, hour)[0];
  if (figures) {
    const threshold = config?.serverErrorPercent ?? DEFAULT_SERVER_ERROR_PERCENT;
    const errors = Math.max(0, figures.errors_5xx - figures.key_rejected);
    const share = figures.requests > 0 ? (100 * errors) / figures.requests : 0;
    if (
      figures.requests >= SERVER_ERROR_MIN_REQUESTS &&
      share >= threshold &&
      firstTime(sql, 'server_errors', hour, threshold)
    ) {
      raiseAlert(
        sql,
        config,
        {
          kind: 'server_errors',
          tenant_id: tenantId,
          threshold,
          share_percent: Math.round(share * 10) / 10,
          errors,
          requests: figures.requests,
          ...period,
        },
        now,
      );
      raised = true;
    }
  }
  return raised;
}

/** Drops key refusals older than `before` (with the history). */
export function sweepHealth(sql: Sql, before: number): void {
  sql.exec('DELETE FROM key_rejections_hourly WHERE hour < ?', before);
}
