/**
 * The tenant's last 30 days, by day, as a uPlot chart (requests and refusals)
 * with the same numbers in a table for screen readers and copying.
 */
import { useEffect, useRef } from 'hono/jsx/dom';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { count } from './format';
import type { Usage } from './types';

const DAY_MS = 86_400_000;
export const USAGE_DAYS = 30;

interface Day {
  at: number;
  requests: number;
  refusals: number;
}

/** One row per UTC day, the empty ones too, oldest first. */
export function dailyRows(usage: Usage, now = Date.now()): Day[] {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const rows = new Map<number, Day>();
  for (let i = USAGE_DAYS - 1; i >= 0; i--) {
    const at = today - i * DAY_MS;
    rows.set(at, { at, requests: 0, refusals: 0 });
  }
  for (const d of usage.days) {
    const row = rows.get(Date.parse(d.t));
    if (row) row.requests += d.requests;
  }
  for (const r of usage.refusals ?? []) {
    const row = rows.get(Math.floor(Date.parse(r.t) / DAY_MS) * DAY_MS);
    if (row) row.refusals += r.count;
  }
  return [...rows.values()];
}

const day = (at: number) => new Date(at).toISOString().slice(0, 10);

export function UsageChart({ usage }: { usage: Usage }) {
  const box = useRef<HTMLDivElement>(null);
  const rows = dailyRows(usage);
  const total = rows.reduce((n, r) => n + r.requests, 0);
  const refused = rows.reduce((n, r) => n + r.refusals, 0);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const data: uPlot.AlignedData = [
      rows.map((r) => r.at / 1000),
      rows.map((r) => r.requests),
      rows.map((r) => r.refusals),
    ];
    const chart = new uPlot(
      {
        width: Math.max(320, el.clientWidth),
        height: 240,
        legend: { show: false },
        scales: { x: { time: true } },
        axes: [{ stroke: '#1f2328' }, { stroke: '#1f2328' }],
        series: [
          {},
          { label: 'Requests', stroke: '#0b57d0', width: 2, fill: 'rgba(11,87,208,0.08)' },
          { label: 'Refusals', stroke: '#b3261e', width: 2, dash: [6, 4] },
        ],
      },
      data,
      el,
    );
    return () => chart.destroy();
  }, [usage]);

  return (
    <div>
      <p>
        {count(total)} requests and {count(refused)} refusals in the last {USAGE_DAYS} days (UTC
        days).
      </p>
      <p class="legend" aria-hidden="true">
        <span class="swatch requests" /> Requests <span class="swatch refusals" /> Refusals
      </p>
      <div
        ref={box}
        class="chart"
        role="img"
        aria-label={`Requests and refusals per day over the last ${USAGE_DAYS} days: ${count(total)} requests, ${count(refused)} refusals`}
      />
      <details>
        <summary>The same as a table</summary>
        <table>
          <caption>Requests and refusals per UTC day</caption>
          <thead>
            <tr>
              <th scope="col">Day</th>
              <th scope="col">Requests</th>
              <th scope="col">Refusals</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr>
                <td>{day(r.at)}</td>
                <td>{count(r.requests)}</td>
                <td>{count(r.refusals)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </div>
  );
}
