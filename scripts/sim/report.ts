/**
 * The simulation's figures, per scenario and design: a row of the table
 * `npm run sim` prints (and BENCHMARKS.md keeps), and the SVG chart of the
 * two figures the hierarchy exists for.
 */
import type { RunResult } from './fleet';
import { percentile } from './metrics';

export interface Row {
  scenario: string;
  design: string;
  requests: number;
  /** Most admitted in any window (counting time) / the limit, the worst tenant. */
  busiest: string;
  /** The same by when answers reached the isolates. */
  delivered: string;
  utilisation: string;
  callsPerRequest: string;
  rootCallsPerRequest: string;
  busiestObject: string;
  busiestObjectPerSecond: number;
  busiestSettledObject: string;
  busiestSettledPerSecond: number;
  waited: string;
  waitedRoot: string;
  waitedRootShare: number;
  waitP50: string;
  waitP99: string;
  revocationMs: string;
  refused: number;
  /** Share of refusals answered without a call to the root TenantGuard (0..1; null: none). */
  refusedWithoutGuardCall: number | null;
  /** Share of refusals answered in the isolate, without any Durable Object call (0..1; null: none). */
  refusedInIsolate: number | null;
  admittedWaitP50: string;
  admittedWaitP99: string;
  refusedWaitP50: string;
  refusedWaitP99: string;
  /** Calls Durable Objects refused as overloaded (a full queue). */
  overloaded: number;
  /** Requests answered 503: the guard could not be reached (overloaded, or within a second of that). */
  unavailable: number;
  /** Wall-clock seconds the run took. */
  seconds: number;
}

const pct = (x: number) => `${(100 * x).toFixed(x < 0.1 ? 2 : 1)} %`;

export function row(r: RunResult): Row {
  const t = r.tally;
  const worst = r.tenants.reduce((a, b) => (b.busiest / b.limit > a.busiest / a.limit ? b : a));
  const utilisations = r.tenants.flatMap((x) => (x.utilisation === null ? [] : [x.utilisation]));
  const lags = r.tenants.flatMap((x) => (x.actionLagMs === null ? [] : [x.actionLagMs]));
  const waitedRootShare = t.waitedForRoot / Math.max(1, t.measured);
  return {
    scenario: r.scenario,
    design: r.design,
    requests: t.requests,
    busiest: `${worst.busiest}/${worst.limit}`,
    delivered: `${worst.busiestDelivered}/${worst.limit}`,
    utilisation: utilisations.length ? pct(Math.min(...utilisations)) : '–',
    callsPerRequest: r.callsPerRequest.toFixed(3),
    rootCallsPerRequest: r.rootCallsPerRequest.toFixed(3),
    busiestObject: r.busiestObject.name.replace(/^(root|broker) [^:]+/, '$1'),
    busiestObjectPerSecond: r.busiestObject.callsPerSecond,
    busiestSettledObject: r.busiestSettled.name.replace(/^(root|broker) [^:]+/, '$1'),
    busiestSettledPerSecond: r.busiestSettled.callsPerSecond,
    waited: pct(t.waits.filter((w) => w > 0).length / Math.max(1, t.measured)),
    waitedRoot: pct(waitedRootShare),
    waitedRootShare,
    waitP50: `${Math.round(percentile(t.waits, 50))}`,
    waitP99: `${Math.round(percentile(t.waits, 99))}`,
    revocationMs: lags.length ? `${Math.round(Math.max(...lags))}` : '–',
    refused: t.refused,
    refusedWithoutGuardCall: t.refused ? round3(t.refusedWithoutGuardCall / t.refused) : null,
    refusedInIsolate: t.refused ? round3(t.refusedInIsolate / t.refused) : null,
    admittedWaitP50: `${Math.round(percentile(t.admittedWaits, 50))}`,
    admittedWaitP99: `${Math.round(percentile(t.admittedWaits, 99))}`,
    refusedWaitP50: t.refusedWaits.length ? `${Math.round(percentile(t.refusedWaits, 50))}` : '–',
    refusedWaitP99: t.refusedWaits.length ? `${Math.round(percentile(t.refusedWaits, 99))}` : '–',
    overloaded: r.overloaded,
    unavailable: t.unavailable,
    seconds: Math.round(r.wallMs / 100) / 10,
  };
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;
const share = (x: number | null) => (x === null ? '–' : pct(x));

const COLUMNS: [keyof Row, string][] = [
  ['scenario', 'scenario'],
  ['design', 'design'],
  ['requests', 'requests'],
  ['busiest', 'most in a window / limit'],
  ['delivered', '… as delivered'],
  ['utilisation', 'utilisation'],
  ['callsPerRequest', 'DO calls / req'],
  ['rootCallsPerRequest', 'root calls / req'],
  ['busiestObjectPerSecond', 'busiest DO calls/s'],
  ['busiestObject', '(which)'],
  ['busiestSettledPerSecond', 'after 2 s'],
  ['busiestSettledObject', '(which)'],
  ['waited', 'waited'],
  ['waitedRoot', 'waited for root'],
  ['waitP50', 'p50 wait ms'],
  ['waitP99', 'p99 wait ms'],
  ['revocationMs', 'revocation → last admit ms'],
];

/** The second table: refusals, and waits of admitted and refused requests apart. */
const REFUSAL_COLUMNS: [string, (r: Row) => string][] = [
  ['scenario', (r) => r.scenario],
  ['design', (r) => r.design],
  ['refused', (r) => String(r.refused)],
  ['refused without a guard call', (r) => share(r.refusedWithoutGuardCall)],
  ['… in the isolate', (r) => share(r.refusedInIsolate)],
  ['admitted p50 / p99 wait ms', (r) => `${r.admittedWaitP50} / ${r.admittedWaitP99}`],
  ['refused p50 / p99 wait ms', (r) => `${r.refusedWaitP50} / ${r.refusedWaitP99}`],
  ['calls refused as overloaded', (r) => String(r.overloaded)],
  ['answered 503', (r) => String(r.unavailable)],
  ['run s', (r) => String(r.seconds)],
];

export function markdownTable(rows: Row[]): string {
  const table = (heads: string[], cells: string[][]) =>
    [
      `| ${heads.join(' | ')} |`,
      `|${heads.map(() => '---').join('|')}|`,
      ...cells.map((c) => `| ${c.join(' | ')} |`),
    ].join('\n');
  return [
    table(
      COLUMNS.map(([, h]) => h),
      rows.map((r) => COLUMNS.map(([k]) => String(r[k]))),
    ),
    table(
      REFUSAL_COLUMNS.map(([h]) => h),
      rows.map((r) => REFUSAL_COLUMNS.map(([, cell]) => cell(r))),
    ),
  ].join('\n\n');
}

/**
 * Two bar charts side by side, flat (today's design) against regional, per
 * scenario: the busiest object's calls a second (500 marked), and the share
 * of requests that waited for the root guard (1 % marked, log scale).
 */
export function chartSvg(rows: Row[]): string {
  const scenarios = [...new Set(rows.map((r) => r.scenario))];
  const get = (s: string, d: string) => rows.find((r) => r.scenario === s && r.design === d);
  const W = 960;
  const panelW = 440;
  const barH = 12;
  const rowH = 34;
  const top = 48;
  const H = top + scenarios.length * rowH + 40;
  const colors = { flat: '#b4443c', regional: '#2f6f9f' };
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="10" y="18" font-size="14" font-weight="bold">npm run sim: 300 data centers, flat (today) vs regional brokers</text>`,
    `<rect x="600" y="8" width="10" height="10" fill="${colors.flat}"/><text x="614" y="17">flat</text>`,
    `<rect x="660" y="8" width="10" height="10" fill="${colors.regional}"/><text x="674" y="17">regional</text>`,
  ];
  const panels = [
    {
      x: 140,
      title: 'busiest Durable Object after the first 2 s, calls/s (goal at 1M/min: ≤ 500)',
      max: 1200,
      mark: 500,
      value: (r: Row) => r.busiestSettledPerSecond,
      label: (r: Row) => String(r.busiestSettledPerSecond),
      scale: (v: number, max: number) => Math.min(1, v / max),
    },
    {
      x: 140 + panelW + 30,
      title: 'requests that waited for the root (goal, thin spread: ≤ 1 %; log)',
      max: 1,
      mark: 0.01,
      value: (r: Row) => r.waitedRootShare,
      label: (r: Row) => r.waitedRoot,
      scale: (v: number) => (v <= 0.0001 ? 0 : Math.min(1, (Math.log10(v) + 4) / 4)),
    },
  ];
  const width = panelW - 130;
  for (const p of panels) {
    out.push(`<text x="${p.x}" y="${top - 12}" font-weight="bold">${p.title}</text>`);
    const markX = p.x + p.scale(p.mark, p.max) * width;
    out.push(
      `<line x1="${markX}" y1="${top - 4}" x2="${markX}" y2="${top + scenarios.length * rowH}" stroke="#888" stroke-dasharray="4 3"/>`,
    );
    scenarios.forEach((s, i) => {
      (['flat', 'regional'] as const).forEach((d, j) => {
        const r = get(s, d);
        if (!r) return;
        const y = top + i * rowH + j * (barH + 2);
        const w = Math.max(1, p.scale(p.value(r), p.max) * width);
        out.push(
          `<rect x="${p.x}" y="${y}" width="${w.toFixed(1)}" height="${barH}" fill="${colors[d]}"/>`,
        );
        out.push(`<text x="${p.x + w + 4}" y="${y + 10}">${p.label(r)}</text>`);
      });
    });
  }
  scenarios.forEach((s, i) => {
    out.push(`<text x="10" y="${top + i * rowH + 18}">${s}</text>`);
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}
