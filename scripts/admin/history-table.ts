/** The operator CLI's usage history: one line per day, with a bar for its requests. */

export interface DayPoint {
  t: string;
  requests: number;
  units: number;
  p95_ms: number | null;
}

const BAR_WIDTH = 30;

/** `days` days ending with the one starting at `today` (ms), days without traffic included. */
export function historyTable(series: DayPoint[], today: number, days: number): string {
  const byDay = new Map(series.map((p) => [p.t.slice(0, 10), p]));
  const rows = Array.from({ length: days }, (_, i) => {
    const day = new Date(today - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10);
    return { day, point: byDay.get(day) };
  });
  const most = Math.max(1, ...rows.map((r) => r.point?.requests ?? 0));
  const lines = rows.map(({ day, point }) => {
    const requests = point?.requests ?? 0;
    const bar = '█'.repeat(Math.round((requests / most) * BAR_WIDTH)) || (requests > 0 ? '▏' : '');
    const p95 = point?.p95_ms === null || point?.p95_ms === undefined ? '-' : `${point.p95_ms}`;
    return `${day}  ${String(requests).padStart(8)}  ${String(point?.units ?? 0).padStart(8)}  ${p95.padStart(7)}  ${bar}`;
  });
  const total = rows.reduce((n, r) => n + (r.point?.requests ?? 0), 0);
  return [
    `day         requests     units  p95 ms`,
    ...lines,
    `total ${String(total).padStart(14)}`,
  ].join('\n');
}
