/**
 * The tenant's last 30 days, by UTC day, as uPlot charts (requests and
 * refusals; median and 95th-percentile latency), each with the same numbers
 * in a table for screen readers and copying.
 */
import { useEffect, useRef } from 'hono/jsx/dom';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { count } from '../lib/format';
import type { Usage } from './types';

const DAY_MS = 86_400_000;
export const USAGE_DAYS = 30;

interface Day {
  at: number;
  requests: number;
  refusals: number;
  p50_ms: number | null;
  p95_ms: number | null;
}

/** One row per UTC day, the empty ones too, oldest first. */
export function dailyRows(usage: Usage, now = Date.now()): Day[] {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const rows = new Map<number, Day>();
  for (let i = USAGE_DAYS - 1; i >= 0; i--) {
    const at = today - i * DAY_MS;
    rows.set(at, { at, requests: 0, refusals: 0, p50_ms: null, p95_ms: null });
  }
  for (const d of usage.days) {
    const row = rows.get(Math.floor(Date.parse(d.t) / DAY_MS) * DAY_MS);
    if (!row) continue;
    row.requests += d.requests;
    // Without grouping there is one point a day; a bound of null means above 10 s.
    row.p50_ms = d.p50_ms ?? row.p50_ms;
    row.p95_ms = d.p95_ms ?? row.p95_ms;
  }
  for (const r of usage.refusals ?? []) {
    const row = rows.get(Math.floor(Date.parse(r.t) / DAY_MS) * DAY_MS);
    if (row) row.refusals += r.count;
  }
  return [...rows.values()];
}

const day = (at: number) => new Date(at).toISOString().slice(0, 10);
const ms = (v: number | null) => (v === null ? '–' : `≤ ${count(v)} ms`);

interface Line {
  /** Names the legend swatch's class (portal.css), as the CSP allows no inline style. */
  key: 'requests' | 'refusals' | 'p50' | 'p95';
  label: string;
  values: (number | null)[];
  color: string;
  dashed?: boolean;
  /** Each value as the table shows it. */
  text: (v: number | null) => string;
}

interface ChartProps {
  id: string;
  caption: string;
  summary: string;
  at: number[];
  lines: Line[];
  /** The answer the lines come from: the chart is drawn again only when it changes. */
  source: Usage;
}

function DailyChart(props: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const chart = new uPlot(
      {
        width: Math.max(320, el.clientWidth),
        height: 220,
        legend: { show: false },
        scales: { x: { time: true } },
        axes: [{ stroke: '#1f2328' }, { stroke: '#1f2328' }],
        series: [
          {},
          ...props.lines.map((l) => ({
            label: l.label,
            stroke: l.color,
            width: 2,
            ...(l.dashed ? { dash: [6, 4] } : {}),
          })),
        ],
      },
      [props.at.map((t) => t / 1000), ...props.lines.map((l) => l.values)] as uPlot.AlignedData,
      el,
    );
    return () => chart.destroy();
  }, [props.source]);

  return (
    <figure aria-labelledby={`${props.id}-caption`}>
      <figcaption id={`${props.id}-caption`}>{props.caption}</figcaption>
      <p class="legend" aria-hidden="true">
        {props.lines.map((l) => (
          <>
            <span class={`swatch ${l.key}`} />
            {l.label}{' '}
          </>
        ))}
      </p>
      <div ref={box} class="chart" role="img" aria-label={props.summary} />
      <details>
        <summary>{props.caption}: the numbers</summary>
        <table>
          <caption class="visually-hidden">{props.caption}</caption>
          <thead>
            <tr>
              <th scope="col">Day (UTC)</th>
              {props.lines.map((l) => (
                <th scope="col">{l.label}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {props.at.map((at, i) => (
              <tr>
                <th scope="row">{day(at)}</th>
                {props.lines.map((l) => (
                  <td>{l.text(l.values[i] ?? null)}</td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}

const number = (v: number | null) => count(v ?? 0);

export function UsageCharts({ usage }: { usage: Usage }) {
  const rows = dailyRows(usage);
  const at = rows.map((r) => r.at);
  const total = rows.reduce((n, r) => n + r.requests, 0);
  const refused = rows.reduce((n, r) => n + r.refusals, 0);
  const worst95 = Math.max(0, ...rows.map((r) => r.p95_ms ?? 0));
  return (
    <div>
      <p>
        {count(total)} requests and {count(refused)} refusals in the last {USAGE_DAYS} days.
      </p>
      <DailyChart
        id="requests"
        caption="Requests and refusals per day"
        summary={`Requests and refusals per day over ${USAGE_DAYS} days: ${count(total)} requests, ${count(refused)} refusals`}
        at={at}
        source={usage}
        lines={[
          {
            key: 'requests',
            label: 'Requests',
            values: rows.map((r) => r.requests),
            color: '#0b57d0',
            text: number,
          },
          {
            key: 'refusals',
            label: 'Refusals',
            values: rows.map((r) => r.refusals),
            color: '#b3261e',
            dashed: true,
            text: number,
          },
        ]}
      />
      <DailyChart
        id="latency"
        caption="Latency per day (median and 95th percentile, upper bounds)"
        summary={`Latency per day over ${USAGE_DAYS} days; the slowest day's 95th percentile is at most ${count(worst95)} ms`}
        at={at}
        source={usage}
        lines={[
          {
            key: 'p50',
            label: 'p50',
            values: rows.map((r) => r.p50_ms),
            color: '#1a7f37',
            text: ms,
          },
          {
            key: 'p95',
            label: 'p95',
            values: rows.map((r) => r.p95_ms),
            color: '#8250df',
            dashed: true,
            text: ms,
          },
        ]}
      />
    </div>
  );
}
