/**
 * The tenant's usage as uPlot charts, over the last 48 hours by hour or the last
 * 30 days by UTC day (requests and refusals; median and 95th-percentile latency),
 * each with the same numbers in a table for screen readers and copying, and the
 * refusals of that range by policy.
 */
import { useEffect, useRef, useState } from 'hono/jsx/dom';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { RefusalPoint, SeriesPoint } from '../../src/types/wire';
import { count } from '../lib/format';
import type { Usage } from './types';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
export const USAGE_DAYS = 30;
export const USAGE_HOURS = 48;

/** The two ranges the portal shows: what `/usage` answers for each. */
const RANGES = {
  hours: { step: HOUR_MS, buckets: USAGE_HOURS, label: `${USAGE_HOURS} hours`, per: 'hour' },
  days: { step: DAY_MS, buckets: USAGE_DAYS, label: `${USAGE_DAYS} days`, per: 'day' },
} as const;
type Range = keyof typeof RANGES;

interface Bucket {
  at: number;
  requests: number;
  refusals: number;
  p50_ms: number | null;
  p95_ms: number | null;
}

/** One row per bucket (hour or UTC day), the empty ones too, oldest first. */
export function bucketRows(
  series: SeriesPoint[],
  refusals: RefusalPoint[],
  range: Range,
  now = Date.now(),
): Bucket[] {
  const { step, buckets } = RANGES[range];
  const last = Math.floor(now / step) * step;
  const rows = new Map<number, Bucket>();
  for (let i = buckets - 1; i >= 0; i--) {
    const at = last - i * step;
    rows.set(at, { at, requests: 0, refusals: 0, p50_ms: null, p95_ms: null });
  }
  for (const d of series) {
    const row = rows.get(Math.floor(Date.parse(d.t) / step) * step);
    if (!row) continue;
    row.requests += d.requests;
    // Without grouping there is one point a bucket; a bound of null means above 10 s.
    row.p50_ms = d.p50_ms ?? row.p50_ms;
    row.p95_ms = d.p95_ms ?? row.p95_ms;
  }
  for (const r of refusals) {
    const row = rows.get(Math.floor(Date.parse(r.t) / step) * step);
    if (row) row.refusals += r.count;
  }
  return [...rows.values()];
}

const day = (at: number) => new Date(at).toISOString().slice(0, 10);
const hourOf = (at: number) => `${new Date(at).toISOString().slice(0, 13).replace('T', ' ')}:00`;
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
  /** What a row of the table is: an hour, or a UTC day. */
  per: 'hour' | 'day';
  caption: string;
  summary: string;
  at: number[];
  lines: Line[];
  /** The answer the lines come from: the chart is drawn again only when it changes. */
  source: unknown;
}

function UsageChart(props: ChartProps) {
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
              <th scope="col">{props.per === 'hour' ? 'Hour (UTC)' : 'Day (UTC)'}</th>
              {props.lines.map((l) => (
                <th scope="col">{l.label}</th>
              ))}
            </tr>
          </thead>
          <tbody>
            {props.at.map((at, i) => (
              <tr>
                <th scope="row">{props.per === 'hour' ? hourOf(at) : day(at)}</th>
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

/** Each line: the bucket's figure it draws, how it looks and reads (a chart's second is dashed). */
const LINES: Record<Line['key'], Omit<Line, 'key' | 'values'> & { figure: keyof Bucket }> = {
  requests: { figure: 'requests', label: 'Requests', color: '#0b57d0', text: number },
  refusals: { figure: 'refusals', label: 'Refusals', color: '#b3261e', dashed: true, text: number },
  p50: { figure: 'p50_ms', label: 'p50', color: '#1a7f37', text: ms },
  p95: { figure: 'p95_ms', label: 'p95', color: '#8250df', dashed: true, text: ms },
};

const linesOf = (rows: Bucket[], ...keys: Line['key'][]): Line[] =>
  keys.map((key) => {
    const { figure, ...look } = LINES[key];
    return { key, ...look, values: rows.map((r) => r[figure]) };
  });

export function UsageCharts({ usage }: { usage: Usage }) {
  const [range, setRange] = useState<Range>('hours');
  const { label, per } = RANGES[range];
  const rows =
    range === 'hours'
      ? bucketRows(usage.hours, usage.hourly_refusals, 'hours')
      : bucketRows(usage.days, usage.refusals, 'days');
  const at = rows.map((r) => r.at);
  const total = rows.reduce((n, r) => n + r.requests, 0);
  const refused = rows.reduce((n, r) => n + r.refusals, 0);
  const worst95 = Math.max(0, ...rows.map((r) => r.p95_ms ?? 0));
  const byPolicy = new Map<string, number>();
  for (const r of range === 'hours' ? usage.hourly_refusals : usage.refusals) {
    byPolicy.set(r.policy, (byPolicy.get(r.policy) ?? 0) + r.count);
  }
  // Drawn again when the range changes: the chart keys on what it draws.
  const source = range === 'hours' ? usage.hours : usage.days;
  return (
    <div>
      <fieldset class="range">
        <legend>Range</legend>
        {(Object.keys(RANGES) as Range[]).map((r) => (
          <label class="choice">
            <input
              type="radio"
              name="usage-range"
              value={r}
              checked={r === range}
              onChange={() => setRange(r)}
            />
            Last {RANGES[r].label}, by {RANGES[r].per}
          </label>
        ))}
      </fieldset>
      <p data-testid="usage-total">
        {count(total)} requests and {count(refused)} refusals in the last {label}.
      </p>
      <UsageChart
        id="requests"
        per={per}
        caption={`Requests and refusals per ${per}`}
        summary={`Requests and refusals per ${per} over the last ${label}: ${count(total)} requests, ${count(refused)} refusals`}
        at={at}
        source={source}
        lines={linesOf(rows, 'requests', 'refusals')}
      />
      <UsageChart
        id="latency"
        per={per}
        caption={`Latency per ${per} (median and 95th percentile, upper bounds)`}
        summary={`Latency per ${per} over the last ${label}; the slowest ${per}'s 95th percentile is at most ${count(worst95)} ms`}
        at={at}
        source={source}
        lines={linesOf(rows, 'p50', 'p95')}
      />
      <RefusalsBy
        label={label}
        byPolicy={byPolicy}
        byOperation={usage.refusals_by_operation[range]}
      />
    </div>
  );
}

/** The range's refusals by the policy that refused them (rate or quota), and by operation. */
function RefusalsBy(props: {
  label: string;
  byPolicy: Map<string, number>;
  byOperation: { operation: string; count: number }[];
}) {
  const policies = [...props.byPolicy.entries()].sort((a, b) => b[1] - a[1]);
  const operations = props.byOperation.map(
    (o) => [o.operation || 'not recorded', o.count] as const,
  );
  if (policies.length === 0) {
    return (
      <section aria-labelledby="refusals-by-title">
        <h3 id="refusals-by-title">Refusals in the last {props.label}</h3>
        <p>None: no request was refused by a rate policy or a quota.</p>
      </section>
    );
  }
  return (
    <section aria-labelledby="refusals-by-title">
      <h3 id="refusals-by-title">Refusals in the last {props.label}</h3>
      <div class="row tables">
        <CountTable testId="refusals-by-policy" what="Policy" rows={policies} />
        <CountTable testId="refusals-by-operation" what="Operation" rows={operations} />
      </div>
    </section>
  );
}

function CountTable(props: {
  testId: string;
  what: string;
  rows: readonly (readonly [string, number])[];
}) {
  return (
    <table data-testid={props.testId}>
      <caption>By {props.what.toLowerCase()}</caption>
      <thead>
        <tr>
          <th scope="col">{props.what}</th>
          <th scope="col">Refusals</th>
        </tr>
      </thead>
      <tbody>
        {props.rows.map(([name, n]) => (
          <tr>
            <th scope="row">{name}</th>
            <td>{count(n)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
