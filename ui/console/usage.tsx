/**
 * A tenant's usage over 24 h, 7 d, 30 d or 90 d, from the hourly rollups
 * (GET /admin/tenants/:id/analytics): requests by status class, operation or
 * token, refusals by policy, p50/p95 latency and the read cache's hit ratio,
 * drawn with uPlot; a CSV of what the chart shows (docs/CONSOLE.md).
 */
import { useEffect, useRef, useState } from 'hono/jsx/dom';
import type { Analytics } from '../../src/types/wire';
import { api } from './api';
import { Chart, type Line, RangeButtons } from './chart';
import { Options, PageError, refusal } from './form';

const RANGES = [
  { label: '24 h', days: 1, granularity: 'hour' },
  { label: '7 d', days: 7, granularity: 'hour' },
  { label: '30 d', days: 30, granularity: 'day' },
  { label: '90 d', days: 90, granularity: 'day' },
] as const;
type Split = 'status' | 'route' | 'token';
/** [label, value], as Options takes them. */
const SPLITS = [
  ['status class', 'status'],
  ['operation', 'route'],
  ['token', 'token'],
] as const;
const BUCKETS = [
  ['hours', 'hour'],
  ['days', 'day'],
] as const;
const MAX_LINES = 8;
/** Charts on the page: requests, refusals, latency, cache hit ratio. */
const CHARTS = 4;

interface Panel {
  title: string;
  series: Line[];
  unit: string;
  yRange?: [number, number];
}

interface Charts {
  x: number[];
  requests: { label: string; values: number[] }[];
  refusals: { label: string; values: number[] }[];
  p50: (number | null)[];
  p95: (number | null)[];
  /** Percent of cached reads the read cache answered; null where none looked. */
  hitRatio: (number | null)[];
  total: number;
  refused: number;
  /** What was asked for, e.g. "7 d, by hour". */
  caption: string;
}

function timeline(a: Analytics): number[] {
  const step = a.granularity === 'hour' ? 3600 : 86_400;
  const first = Math.floor(Date.parse(a.from) / 1000 / step) * step;
  const last = Math.floor(Date.parse(a.to) / 1000 / step) * step;
  const xs: number[] = [];
  for (let t = first; t <= last; t += step) xs.push(t);
  return xs;
}

/** Groups → one value per bucket, the busiest first; the rest summed as "other". */
function lines(
  xs: number[],
  points: { t: string; key: string; value: number }[],
): { label: string; values: number[] }[] {
  const index = new Map(xs.map((x, i) => [x, i]));
  const byKey = new Map<string, number[]>();
  for (const p of points) {
    const i = index.get(Date.parse(p.t) / 1000);
    if (i === undefined) continue;
    const values = byKey.get(p.key) ?? new Array<number>(xs.length).fill(0);
    byKey.set(p.key, values);
    values[i] = (values[i] ?? 0) + p.value;
  }
  const sum = (v: number[]) => v.reduce((a, b) => a + b, 0);
  const sorted = [...byKey.entries()].sort((a, b) => sum(b[1]) - sum(a[1]));
  const shown = sorted.slice(0, MAX_LINES - 1).map(([label, values]) => ({ label, values }));
  const rest = sorted.slice(MAX_LINES - 1);
  if (rest.length === 1 && rest[0]) shown.push({ label: rest[0][0], values: rest[0][1] });
  else if (rest.length > 1) {
    shown.push({
      label: `${rest.length} others`,
      values: xs.map((_, i) => rest.reduce((a, [, v]) => a + (v[i] ?? 0), 0)),
    });
  }
  return shown;
}

function charts(
  grouped: Analytics,
  overall: Analytics,
  split: Split,
  tokenNames: Map<string, string>,
): Charts {
  const xs = timeline(grouped);
  const index = new Map(xs.map((x, i) => [x, i]));
  const p50 = new Array<number | null>(xs.length).fill(null);
  const p95 = new Array<number | null>(xs.length).fill(null);
  const hitRatio = new Array<number | null>(xs.length).fill(null);
  for (const p of overall.series) {
    const i = index.get(Date.parse(p.t) / 1000);
    if (i === undefined) continue;
    p50[i] = p.p50_ms;
    p95[i] = p.p95_ms;
    const lookups = p.cache_lookups ?? 0;
    hitRatio[i] = lookups > 0 ? Math.round((1000 * (p.cache_hits ?? 0)) / lookups) / 10 : null;
  }
  const requests = lines(
    xs,
    grouped.series.map((p) => {
      const key = p[split] ?? '—';
      return {
        t: p.t,
        key: split === 'token' ? (tokenNames.get(key) ?? key) : key,
        value: p.requests,
      };
    }),
  );
  const refusals = lines(
    xs,
    grouped.refusals.map((r) => ({ t: r.t, key: r.policy, value: r.count })),
  );
  return {
    x: xs,
    requests,
    refusals,
    p50,
    p95,
    hitRatio,
    total: grouped.series.reduce((a, p) => a + p.requests, 0),
    refused: grouped.refusals.reduce((a, r) => a + r.count, 0),
    caption: '',
  };
}

/** The page's charts, in order (CHARTS of them). */
function panels(data: Charts, split: Split): Panel[] {
  return [
    { title: `Requests by ${split}`, series: data.requests, unit: 'requests' },
    { title: 'Refusals by policy', series: data.refusals, unit: 'refusals' },
    {
      title: 'Latency (upper bound of the bucket)',
      series: [
        { label: 'p50', values: data.p50 },
        { label: 'p95', values: data.p95 },
      ],
      unit: 'ms',
    },
    {
      title: 'Cache hit ratio (reads of cached operations)',
      series: [{ label: 'hits', values: data.hitRatio }],
      unit: '%',
      yRange: [0, 100],
    },
  ];
}

export function UsageSection(props: { tenantId: string }) {
  const [range, setRange] = useState<(typeof RANGES)[number]>(RANGES[0]);
  const [split, setSplit] = useState<Split>('status');
  // Each range has its usual bucket; the operator may ask for hours over 30 or 90 days too.
  const [byHour, setByHour] = useState<boolean | null>(null);
  const granularity = (byHour ?? range.granularity === 'hour') ? 'hour' : 'day';
  const [data, setData] = useState<Charts | null>(null);
  const [error, setError] = useState('');
  const [reload, setReload] = useState(0);
  // How long the last drawing took, and of what (range|bucket|split): tests wait for it.
  const [rendered, setRendered] = useState<{ ms: number; of: string } | null>(null);
  const section = useRef<HTMLElement>(null);
  const drawStart = useRef(0);
  const drawn = useRef(0);
  const drawing = useRef('');

  const query = (groupBy: string): Parameters<typeof api.analytics>[1] => {
    const to = Date.now();
    return {
      from: new Date(to - range.days * 86_400_000).toISOString(),
      to: new Date(to).toISOString(),
      granularity,
      ...(groupBy ? { group_by: groupBy } : {}),
    };
  };

  useEffect(() => {
    let live = true;
    setError('');
    setRendered(null);
    const of = `${range.label}|${granularity}|${split}`;
    Promise.all([
      api.analytics(props.tenantId, query(split)),
      api.analytics(props.tenantId, query('')),
      split === 'token' ? api.tokens(props.tenantId) : Promise.resolve({ tokens: [] }),
    ])
      .then(([grouped, overall, { tokens }]) => {
        if (!live) return;
        drawStart.current = performance.now();
        drawn.current = 0;
        drawing.current = of;
        // Ended tokens keep their names too (listed 90 days after they end).
        const ended = (t: (typeof tokens)[number]) =>
          t.revoked_at
            ? ' (revoked)'
            : t.expires_at && Date.parse(t.expires_at) <= Date.now()
              ? ' (expired)'
              : '';
        const names = new Map(tokens.map((t) => [t.id, `${t.name} …${t.last4}${ended(t)}`]));
        const caption = `${range.label}, by ${granularity}`;
        setData({ ...charts(grouped, overall, split, names), caption });
      })
      .catch((err: unknown) => live && setError(refusal(err, [])._form ?? 'Failed'));
    return () => {
      live = false;
    };
  }, [props.tenantId, range, split, granularity, reload]);

  // Render time: from the data in hand to the last chart drawn (docs/CONSOLE.md).
  const onDrawn = () => {
    drawn.current++;
    if (drawn.current === CHARTS) {
      setRendered({ ms: performance.now() - drawStart.current, of: drawing.current });
    }
  };

  const download = async () => {
    const res = await fetch(api.analyticsPath(props.tenantId, query(split)), {
      headers: { accept: 'text/csv' },
      credentials: 'same-origin',
    });
    if (!res.ok) {
      setError(`The CSV could not be made (HTTP ${res.status})`);
      return;
    }
    const link = document.createElement('a');
    link.href = URL.createObjectURL(await res.blob());
    link.download = `${props.tenantId}-usage-${range.label.replace(' ', '')}-by-${split}.csv`;
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
  };

  return (
    <section
      ref={section}
      aria-labelledby="usage-title"
      data-render-ms={rendered?.ms}
      data-drawn={rendered?.of}
    >
      <h2 id="usage-title">Usage</h2>
      <div class="toolbar">
        <RangeButtons
          ranges={RANGES}
          current={range}
          pick={(r) => {
            setRange(r);
            setByHour(null);
          }}
        />
        <label for="usage-split">Requests by</label>
        <select
          id="usage-split"
          onChange={(e: Event) => setSplit((e.target as HTMLSelectElement).value as Split)}
        >
          <Options choices={SPLITS} current={split} />
        </select>
        <label for="usage-bucket">Buckets</label>
        <select
          id="usage-bucket"
          onChange={(e: Event) => setByHour((e.target as HTMLSelectElement).value === 'hour')}
        >
          <Options choices={BUCKETS} current={granularity} />
        </select>
        <button type="button" onClick={() => setReload(reload + 1)}>
          Refresh
        </button>
        <button type="button" onClick={download}>
          Download CSV
        </button>
      </div>
      <PageError error={error} />
      {data ? (
        <>
          <p data-testid="usage-totals">
            {data.total} requests and {data.refused} refusals in the last {data.caption}.
          </p>
          {panels(data, split).map((panel) => (
            <Chart
              key={panel.title}
              title={panel.title}
              x={data.x}
              series={panel.series}
              unit={panel.unit}
              yRange={panel.yRange}
              onDrawn={onDrawn}
            />
          ))}
          {rendered ? <p class="hint">Drawn in {rendered.ms.toFixed(0)} ms.</p> : null}
        </>
      ) : (
        <p class="loading">Loading…</p>
      )}
    </section>
  );
}
