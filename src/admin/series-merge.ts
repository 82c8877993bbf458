/**
 * The fleet's series from its boards' (objects/fleet/fleet-series.ts): each hour's sums
 * added up (the latency histograms too, so the percentiles are the fleet's), every hour
 * from the first to the running one (an hour no board has is an hour without traffic),
 * and each hour's busiest tenants by each figure: the top of the union is in the union of
 * the boards' tops.
 */

import { HOUR_MS, LATENCY_COLUMNS, percentile } from '../metering/usage';
import {
  type BoardSeries,
  type HourTenant,
  SERIES_FIGURES,
  TOP_PER_HOUR,
} from '../objects/fleet/fleet-series';
import type { FleetFigure, FleetPoint } from '../types/wire';

export function mergeSeries(
  boards: BoardSeries[],
  since: number,
  hours: number,
): { points: FleetPoint[]; tenantIds: string[] } {
  const index = new Map<string, number>();
  const tenantIds: string[] = [];
  const indexOf = (id: string) => {
    let i = index.get(id);
    if (i === undefined) {
      i = tenantIds.push(id) - 1;
      index.set(id, i);
    }
    return i;
  };
  const byHour = new Map<number, { sums: Record<FleetFigure, number>; latency: number[] }>();
  for (const h of boards.flatMap((b) => b.hours)) {
    const at = byHour.get(h.hour) ?? {
      sums: { requests: 0, errors_4xx: 0, errors_5xx: 0, refused: 0 },
      latency: LATENCY_COLUMNS.map(() => 0),
    };
    for (const f of SERIES_FIGURES) at.sums[f] += h[f];
    h.latency.forEach((n, i) => {
      at.latency[i] = (at.latency[i] ?? 0) + n;
    });
    byHour.set(h.hour, at);
  }
  const candidates = new Map<number, HourTenant[]>();
  for (const t of boards.flatMap((b) => b.tops)) {
    const list = candidates.get(t.hour) ?? [];
    list.push(t);
    candidates.set(t.hour, list);
  }
  const points: FleetPoint[] = [];
  // The newest hour first: its tenants get the first indexes, which are the ones named.
  for (let n = hours - 1; n >= 0; n--) {
    const hour = since + n * HOUR_MS;
    const at = byHour.get(hour);
    const sums = at?.sums ?? { requests: 0, errors_4xx: 0, errors_5xx: 0, refused: 0 };
    const latency = at?.latency ?? [];
    const near = candidates.get(hour) ?? [];
    const top = {} as FleetPoint['top'];
    for (const f of SERIES_FIGURES) {
      top[f] = near
        .filter((t) => t[f] > 0)
        .sort((a, b) => b[f] - a[f] || a.tenant_id.localeCompare(b.tenant_id))
        .slice(0, TOP_PER_HOUR)
        .map((t): [number, number] => [indexOf(t.tenant_id), t[f]]);
    }
    points.unshift({
      t: new Date(hour).toISOString(),
      ...sums,
      p50_ms: percentile(latency, 0.5),
      p95_ms: percentile(latency, 0.95),
      top,
    });
  }
  return { points, tenantIds };
}
