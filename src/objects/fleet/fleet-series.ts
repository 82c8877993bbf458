/**
 * The fleet board's time series (the console overview's charts, docs/OBSERVABILITY.md,
 * "Fleet overview"): per hour, its tenants' requests, 4xx, 5xx, limiter refusals and
 * latency histogram summed, and the few tenants with the most of each in that hour, so
 * the overview can say a tenant's share of any hour. The histograms add up across boards,
 * so the p95 of the fleet is taken from their sum, never from averages.
 */
import { LATENCY_COLUMNS } from '../../metering/usage';

/** The figures a series has, and a tenant's share is said of. */
export const SERIES_FIGURES = ['requests', 'errors_4xx', 'errors_5xx', 'refused'] as const;
export type SeriesFigure = (typeof SERIES_FIGURES)[number];

/** Tenants a board names per hour and figure (the overview merges the boards' to as many). */
export const TOP_PER_HOUR = 5;

/** One hour of a board's tenants, summed. */
export type BoardHour = { hour: number; latency: number[] } & Record<SeriesFigure, number>;

/** A tenant among the busiest of an hour by some figure, with all its figures. */
export type HourTenant = { hour: number; tenant_id: string } & Record<SeriesFigure, number>;

export interface BoardSeries {
  hours: BoardHour[];
  /** Per hour, the TOP_PER_HOUR tenants with the most of each figure (more than 0). */
  tops: HourTenant[];
}

/** Columns a board added after its first tables (the series', self-service apart): older tables get them, at 0. */
export function migrateSeriesColumns(sql: SqlStorage): void {
  const columns = new Set(
    sql
      .exec<{ name: string }>('PRAGMA table_info(tenant_hours)')
      .toArray()
      .map((c) => c.name),
  );
  // self_service: boards from before self-service requests were counted apart say 0.
  for (const column of ['errors_4xx', 'self_service', ...LATENCY_COLUMNS]) {
    if (!columns.has(column)) {
      sql.exec(`ALTER TABLE tenant_hours ADD COLUMN ${column} INTEGER NOT NULL DEFAULT 0`);
    }
  }
}

const FIGURE_SUMS = SERIES_FIGURES.map((f) => `SUM(${f}) AS ${f}`).join(', ');
const LATENCY_SUMS = LATENCY_COLUMNS.map((c) => `SUM(${c}) AS ${c}`).join(', ');

/** The board's series since `since` (an hour's start), oldest hour first. */
export function boardSeries(sql: SqlStorage, since: number): BoardSeries {
  const hours = sql
    .exec<Record<string, number>>(
      `SELECT hour, ${FIGURE_SUMS}, ${LATENCY_SUMS} FROM tenant_hours WHERE hour >= ?
       GROUP BY hour ORDER BY hour`,
      since,
    )
    .toArray()
    .map((r) => ({
      hour: Number(r.hour),
      ...figuresOf(r),
      latency: LATENCY_COLUMNS.map((c) => Number(r[c] ?? 0)),
    }));
  // Each tenant-hour ranked within its hour by each figure; kept when among the top of any.
  const ranks = SERIES_FIGURES.map(
    (f) => `ROW_NUMBER() OVER (PARTITION BY hour ORDER BY ${f} DESC, tenant_id) AS rank_${f}`,
  ).join(', ');
  const within = SERIES_FIGURES.map((f) => `(rank_${f} <= ? AND ${f} > 0)`).join(' OR ');
  const tops = sql
    .exec<Record<string, number | string>>(
      `SELECT hour, tenant_id, ${SERIES_FIGURES.join(', ')} FROM (
         SELECT hour, tenant_id, ${SERIES_FIGURES.join(', ')}, ${ranks}
         FROM tenant_hours WHERE hour >= ?)
       WHERE ${within} ORDER BY hour`,
      since,
      ...SERIES_FIGURES.map(() => TOP_PER_HOUR),
    )
    .toArray()
    .map((r) => ({ hour: Number(r.hour), tenant_id: String(r.tenant_id), ...figuresOf(r) }));
  return { hours, tops };
}

function figuresOf(r: Record<string, unknown>): Record<SeriesFigure, number> {
  return {
    requests: Number(r.requests ?? 0),
    errors_4xx: Number(r.errors_4xx ?? 0),
    errors_5xx: Number(r.errors_5xx ?? 0),
    refused: Number(r.refused ?? 0),
  };
}
