/**
 * The fleet over time, on the overview (GET /admin/overview/series): requests, 4xx, 5xx
 * and limiter refusals across tenants, and the p50/p95 latency from their histograms,
 * over 24 h or 7 d by hour. Pointing at an hour (or choosing it with the slider, by
 * keyboard) says which tenants made it: each figure's busiest tenants and their share.
 */
import { useEffect, useState } from 'hono/jsx/dom';
import type { FleetFigure, FleetPoint, FleetSeries } from '../../src/types/wire';
import { count } from '../lib/format';
import { ColumnHeads } from '../lib/table';
import { api } from './api';
import { Chart, RangeButtons } from './chart';
import { PageError, refusal } from './form';

const RANGES = [
  { label: '24 h', hours: 24 },
  { label: '7 d', hours: 168 },
] as const;

const FIGURES: { figure: FleetFigure; label: string }[] = [
  { figure: 'requests', label: 'requests' },
  { figure: 'errors_4xx', label: '4xx' },
  { figure: 'errors_5xx', label: '5xx' },
  { figure: 'refused', label: 'refused (429)' },
];

/** An hour's start as people read it: UTC, to the hour. */
const hourText = (iso: string) => `${iso.slice(0, 10)} ${iso.slice(11, 13)}:00 UTC`;

const share = (part: number, whole: number) =>
  whole > 0 ? `${((100 * part) / whole).toFixed(part * 100 < whole ? 1 : 0)} %` : '—';

export function FleetCharts(props: { open: (id: string) => void }) {
  const [range, setRange] = useState<(typeof RANGES)[number]>(RANGES[0]);
  const [data, setData] = useState<FleetSeries | null>(null);
  const [error, setError] = useState('');
  // The hour pointed at, or chosen with the slider (an index into the points).
  const [picked, setPicked] = useState<number | null>(null);

  useEffect(() => {
    let live = true;
    setError('');
    setData(null);
    api
      .fleetSeries(range.hours)
      .then((s) => {
        if (!live) return;
        setData(s);
        setPicked(null);
      })
      .catch((err: unknown) => live && setError(refusal(err, [])._form ?? 'Failed'));
    return () => {
      live = false;
    };
  }, [range]);

  const x = data ? data.points.map((p) => Date.parse(p.t) / 1000) : [];
  const line = (label: string, pick: (p: FleetPoint) => number | null) => ({
    label,
    values: (data?.points ?? []).map(pick),
  });
  const hover = (i: number | null) => {
    if (i !== null) setPicked(i);
  };
  // Without a pick, the running hour.
  const at = data ? (picked ?? data.points.length - 1) : 0;
  const point = data?.points[at];

  return (
    <section aria-labelledby="fleet-series-title" data-testid="fleet-series">
      <h2 id="fleet-series-title">The fleet over time</h2>
      <div class="toolbar">
        <RangeButtons ranges={RANGES} current={range} pick={setRange} />
      </div>
      <PageError error={error} />
      {data ? (
        <>
          <Chart
            title={`Requests across tenants, by hour (${range.label})`}
            x={x}
            series={[
              line('requests', (p) => p.requests),
              line('4xx', (p) => p.errors_4xx),
              line('5xx', (p) => p.errors_5xx),
              line('refused (429)', (p) => p.refused),
            ]}
            unit="requests"
            onHover={hover}
          />
          <Chart
            title={`Latency across tenants (upper bound of the bucket; ${range.label})`}
            x={x}
            series={[line('p50', (p) => p.p50_ms), line('p95', (p) => p.p95_ms)]}
            unit="ms"
            onHover={hover}
          />
          <div class="field">
            <label for="fleet-hour">Hour</label>
            <input
              id="fleet-hour"
              type="range"
              min={0}
              max={data.points.length - 1}
              value={at}
              aria-valuetext={point ? hourText(point.t) : ''}
              onInput={(e: Event) => setPicked(Number((e.target as HTMLInputElement).value))}
            />
          </div>
          {point ? <HourShares point={point} tenants={data.tenants} open={props.open} /> : null}
        </>
      ) : (
        <p class="loading">Loading the fleet's hours…</p>
      )}
    </section>
  );
}

/** One hour: each figure's total, and its busiest tenants with their share of it. */
function HourShares(props: {
  point: FleetPoint;
  tenants: FleetSeries['tenants'];
  open: (id: string) => void;
}) {
  const p = props.point;
  return (
    <div class="card" aria-live="polite" data-testid="hour-shares">
      <h3>
        {hourText(p.t)}: {count(p.requests)} requests, p95{' '}
        {p.p95_ms === null ? '—' : `≤ ${count(p.p95_ms)} ms`}
      </h3>
      <table class="grid">
        <ColumnHeads names={['Figure', 'In the hour', 'Busiest tenants, their share']} />
        <tbody>
          {FIGURES.map(({ figure, label }) => (
            <tr key={figure}>
              <th scope="row">{label}</th>
              <td>{count(p[figure])}</td>
              <td>
                {p.top[figure].length === 0
                  ? '—'
                  : p.top[figure].map(([i, n], k) => {
                      const t = props.tenants[i];
                      if (!t) return null;
                      return (
                        <span key={t.tenant_id}>
                          {k > 0 ? '; ' : ''}
                          <button
                            type="button"
                            class="link"
                            onClick={() => props.open(t.tenant_id)}
                          >
                            {t.name ?? t.tenant_id}
                          </button>{' '}
                          {share(n, p[figure])} ({count(n)})
                        </span>
                      );
                    })}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
