/**
 * The history part's rollups (history-part.ts): hourly usage per token, operation (the
 * column `route`) and status class, and refusals per policy and operation (docs/STORAGE.md), in the
 * tables `usage_hourly` and `refusals_hourly`. Batches from isolates add up; rows
 * older than the retention go.
 */

import { LATENCY_COLUMNS, percentile, type UsageBatch } from '../../../metering/usage';
import type { History, RefusalPoint, SeriesPoint } from '../../../types/wire';
import type { Sql, SqlValue } from '../sql';

const BUCKETS = LATENCY_COLUMNS.length;
const LAT_COLUMNS = LATENCY_COLUMNS;

export type HistoryGroup = 'route' | 'status' | 'token';

export interface HistoryQuery {
  from: number;
  to: number;
  granularity: 'hour' | 'day';
  groupBy: HistoryGroup[];
}

export type { History, RefusalPoint, SeriesPoint };

const COLUMN: Record<HistoryGroup, string> = {
  route: 'route',
  status: 'status',
  token: 'token_id',
};

export function migrateRollups(sql: Sql): void {
  sql.exec(`
    CREATE TABLE IF NOT EXISTS usage_hourly (
      hour INTEGER NOT NULL, token_id TEXT NOT NULL, route TEXT NOT NULL, status TEXT NOT NULL,
      requests INTEGER NOT NULL, units INTEGER NOT NULL,
      ${LAT_COLUMNS.map((c) => `${c} INTEGER NOT NULL DEFAULT 0`).join(', ')},
      PRIMARY KEY (hour, token_id, route, status));
    CREATE TABLE IF NOT EXISTS refusals_hourly (
      hour INTEGER NOT NULL, token_id TEXT NOT NULL, policy TEXT NOT NULL,
      route TEXT NOT NULL DEFAULT '', count INTEGER NOT NULL,
      PRIMARY KEY (hour, token_id, policy, route));
  `);
  // Refusals counted before they named their operation: the table is made again with
  // the column (and its key), their rows under the operation '' (unknown).
  const refusalColumns = sql.exec<{ name: string }>('PRAGMA table_info(refusals_hourly)').toArray();
  if (!refusalColumns.some((c) => c.name === 'route')) {
    sql.exec(`
      ALTER TABLE refusals_hourly RENAME TO refusals_hourly_before_routes;
      CREATE TABLE refusals_hourly (
        hour INTEGER NOT NULL, token_id TEXT NOT NULL, policy TEXT NOT NULL,
        route TEXT NOT NULL DEFAULT '', count INTEGER NOT NULL,
        PRIMARY KEY (hour, token_id, policy, route));
      INSERT INTO refusals_hourly (hour, token_id, policy, route, count)
        SELECT hour, token_id, policy, '', count FROM refusals_hourly_before_routes;
      DROP TABLE refusals_hourly_before_routes;
    `);
  }
  // A token's last use (its latest hour) is one index seek (lastUsedHour).
  sql.exec('CREATE INDEX IF NOT EXISTS usage_by_token ON usage_hourly (token_id, hour)');
  // Rollups made before the cache was counted get the columns, at 0.
  const columns = sql.exec<{ name: string }>('PRAGMA table_info(usage_hourly)').toArray();
  if (!columns.some((c) => c.name === 'cache_hits')) {
    sql.exec(`
      ALTER TABLE usage_hourly ADD COLUMN cache_hits INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE usage_hourly ADD COLUMN cache_lookups INTEGER NOT NULL DEFAULT 0;
    `);
  }
  // Rollups made before billable and self-service requests were told apart: at 0, so an
  // hour from before says nothing of either (docs/BILLING.md, "What is billable").
  if (!columns.some((c) => c.name === 'billable')) {
    sql.exec(`
      ALTER TABLE usage_hourly ADD COLUMN billable INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE usage_hourly ADD COLUMN self_service INTEGER NOT NULL DEFAULT 0;
    `);
  }
}

/** Adds a batch to the rollups (one upsert per row). */
export function recordRollups(sql: Sql, batch: UsageBatch): void {
  const lats = LAT_COLUMNS.join(', ');
  const addLats = LAT_COLUMNS.map((c) => `${c} = ${c} + excluded.${c}`).join(', ');
  for (const r of batch.rows) {
    const latency = Array.from({ length: BUCKETS }, (_, i) => r.latency[i] ?? 0);
    sql.exec(
      `INSERT INTO usage_hourly
         (hour, token_id, route, status, requests, units, cache_hits, cache_lookups,
          billable, self_service, ${lats})
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ${LAT_COLUMNS.map(() => '?').join(', ')})
       ON CONFLICT (hour, token_id, route, status) DO UPDATE SET
         requests = requests + excluded.requests, units = units + excluded.units,
         cache_hits = cache_hits + excluded.cache_hits,
         cache_lookups = cache_lookups + excluded.cache_lookups,
         billable = billable + excluded.billable,
         self_service = self_service + excluded.self_service, ${addLats}`,
      r.hour,
      r.tokenId,
      r.route,
      r.status,
      r.requests,
      r.units,
      r.cacheHits ?? 0,
      r.cacheLookups ?? 0,
      r.billable ?? 0,
      r.selfService ?? 0,
      ...latency,
    );
  }
  for (const r of batch.refusals) {
    sql.exec(
      `INSERT INTO refusals_hourly (hour, token_id, policy, route, count) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (hour, token_id, policy, route) DO UPDATE SET count = count + excluded.count`,
      r.hour,
      r.tokenId,
      r.policy,
      r.route ?? '',
      r.count,
    );
  }
}

/** Series between `from` and `to` (inclusive hours), by hour or UTC day, grouped as asked. */
export function queryHistory(sql: Sql, q: HistoryQuery): History {
  const bucket = q.granularity === 'day' ? '(hour / 86400000) * 86400000' : 'hour';
  const groups = q.groupBy.map((g) => COLUMN[g]);
  const select = [`${bucket} AS t`, ...groups].join(', ');
  const sums = [
    'SUM(requests) AS requests',
    'SUM(units) AS units',
    'SUM(cache_hits) AS cache_hits',
    'SUM(cache_lookups) AS cache_lookups',
    'SUM(billable) AS billable',
    'SUM(self_service) AS self_service',
    ...LAT_COLUMNS.map((c) => `SUM(${c}) AS ${c}`),
  ];
  const rows = sql
    .exec<Record<string, SqlValue>>(
      `SELECT ${select}, ${sums.join(', ')} FROM usage_hourly WHERE hour >= ? AND hour <= ?
       GROUP BY ${['t', ...groups].join(', ')} ORDER BY ${['t', ...groups].join(', ')}`,
      q.from,
      q.to,
    )
    .toArray();
  const series = rows.map((r) => {
    const counts = LAT_COLUMNS.map((c) => Number(r[c] ?? 0));
    const point: SeriesPoint = {
      t: new Date(Number(r.t)).toISOString(),
      requests: Number(r.requests),
      units: Number(r.units),
      p50_ms: percentile(counts, 0.5),
      p95_ms: percentile(counts, 0.95),
      cache_hits: Number(r.cache_hits ?? 0),
      cache_lookups: Number(r.cache_lookups ?? 0),
      billable: Number(r.billable ?? 0),
      self_service: Number(r.self_service ?? 0),
    };
    for (const g of q.groupBy) point[g] = String(r[COLUMN[g]]);
    return point;
  });
  const byToken = q.groupBy.includes('token');
  const refusals = sql
    .exec<Record<string, SqlValue>>(
      `SELECT ${bucket} AS t, policy${byToken ? ', token_id' : ''}, SUM(count) AS count
       FROM refusals_hourly WHERE hour >= ? AND hour <= ?
       GROUP BY t, policy${byToken ? ', token_id' : ''} ORDER BY t, policy`,
      q.from,
      q.to,
    )
    .toArray()
    .map((r) => ({
      t: new Date(Number(r.t)).toISOString(),
      policy: String(r.policy),
      ...(byToken ? { token: String(r.token_id) } : {}),
      count: Number(r.count),
    }));
  return { series, refusals };
}

/**
 * The start of the last hour a token was used in, as the history has it: null when it has
 * none (never used, or longer ago than the retention). A request refused before it was
 * let through (a revoked or expired token's 401, a 403, a 429: 4xx that counted no units)
 * is no use: its rows stay in the history, but not in this.
 */
export function lastUsedHour(sql: Sql, tokenId: string): number | null {
  return (
    sql
      .exec<{ hour: number }>(
        `SELECT hour FROM usage_hourly WHERE token_id = ? AND (status <> '4xx' OR units > 0)
         ORDER BY hour DESC LIMIT 1`,
        tokenId,
      )
      .toArray()[0]?.hour ?? null
  );
}

/**
 * Refusals between `from` and `to` by the operation refused, most first (operation
 * `''` for those counted before refusals named it).
 */
export function refusalsByOperation(
  sql: Sql,
  from: number,
  to: number,
): { operation: string; count: number }[] {
  return sql
    .exec<{ route: string; count: number }>(
      `SELECT route, SUM(count) AS count FROM refusals_hourly WHERE hour >= ? AND hour <= ?
       GROUP BY route ORDER BY count DESC, route`,
      from,
      to,
    )
    .toArray()
    .map((r) => ({ operation: r.route, count: r.count }));
}

/**
 * Billable requests by UTC day (the day's start, ms) from `from` to `to` (inclusive days):
 * what the usage export must have delivered (docs/BILLING.md, "Reconciliation").
 */
export function billableByDay(sql: Sql, from: number, to: number): Map<number, number> {
  const rows = sql.exec<{ day: number; n: number }>(
    `SELECT (hour / 86400000) * 86400000 AS day, SUM(billable) AS n FROM usage_hourly
     WHERE hour >= ? AND hour < ? GROUP BY day`,
    from,
    to + 86_400_000,
  );
  return new Map([...rows].map((r) => [r.day, r.n]));
}

/** Deletes rollups older than `before` (ms). */
export function sweepRollups(sql: Sql, before: number): void {
  sql.exec('DELETE FROM usage_hourly WHERE hour < ?', before);
  sql.exec('DELETE FROM refusals_hourly WHERE hour < ?', before);
}
