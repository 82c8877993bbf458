/**
 * One time-series chart of the console (uPlot): the tenant's usage and the fleet's
 * overview draw with it. Lines take their colour from what they are where that has a
 * meaning (a status class: 2xx green, 5xx red), else from a palette that keeps 3:1
 * against the white plot area. A share or ratio chart keeps its axis at 0–100 %.
 */
import { useEffect, useRef } from 'hono/jsx/dom';
import uPlot from 'uplot';

/** Colours that keep at least 3:1 against the white plot area. */
export const PALETTE = [
  '#1f5fbf',
  '#b3261e',
  '#2e7d32',
  '#8a4f00',
  '#6a1b9a',
  '#00796b',
  '#c2185b',
  '#455a64',
];

/** The colours that mean something: success green, client errors amber, server errors red. */
export const MEANING: Record<string, string> = {
  '2xx': '#2e7d32',
  '3xx': '#1f5fbf',
  '4xx': '#8a4f00',
  '5xx': '#b3261e',
  p50: '#1f5fbf',
  p95: '#b3261e',
};

export interface Line {
  label: string;
  values: (number | null)[];
}

/** Each line's colour: its meaning's, else the next palette colour not taken by a meaning. */
export function colours(lines: readonly Line[]): string[] {
  const taken = new Set(lines.map((l) => MEANING[l.label]).filter(Boolean));
  const free = PALETTE.filter((c) => !taken.has(c));
  let next = 0;
  return lines.map((l) => MEANING[l.label] ?? free[next++ % free.length] ?? '#455a64');
}

export function Chart(props: {
  title: string;
  x: number[];
  series: Line[];
  unit: string;
  /** A fixed y range (a percentage: [0, 100]); else from the data. */
  yRange?: [number, number];
  /** Called with the plot once drawn (a tooltip's hook, a render timer). */
  onDrawn?: () => void;
  /** uPlot's cursor hook: the index of the point under the pointer (null: none). */
  onHover?: (index: number | null) => void;
  height?: number;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    // One plot a figure, whatever order the renderer runs effects and cleanups in when
    // the data arrives twice in quick succession (seen under load: two plots, one box).
    el.replaceChildren();
    const stroke = colours(props.series);
    const range = props.yRange;
    const hover = props.onHover;
    const plot = new uPlot(
      {
        width: Math.max(280, el.clientWidth || 800),
        height: props.height ?? 220,
        scales: {
          x: { time: true },
          ...(range ? { y: { range: () => range } } : {}),
        },
        axes: [{}, { label: props.unit, size: 60 }],
        series: [
          {},
          ...props.series.map((s, i) => ({
            label: s.label,
            stroke: stroke[i],
            width: 2,
            spanGaps: false,
          })),
        ],
        hooks: {
          // What the y axis runs to, as drawn (a percentage never past 100).
          draw: [
            (u: uPlot) => {
              el.dataset.yMax = String(u.scales.y?.max ?? '');
            },
          ],
          ...(hover ? { setCursor: [(u: uPlot) => hover(u.cursor.idx ?? null)] } : {}),
        },
      },
      [props.x, ...props.series.map((s) => s.values)] as uPlot.AlignedData,
      el,
    );
    props.onDrawn?.();
    return () => plot.destroy();
  }, [props.x, props.series]);
  const summary = props.series.length
    ? `${props.title}: ${props.series.map((s) => s.label).join(', ')}`
    : `${props.title}: nothing in this range`;
  return (
    <figure class="chart">
      <figcaption>{props.title}</figcaption>
      <div ref={box} role="img" aria-label={summary} />
      {props.series.length === 0 ? <p class="hint">Nothing in this range.</p> : null}
    </figure>
  );
}

/** The ranges a chart section offers, as pressed buttons (one pressed: the one shown). */
export function RangeButtons<R extends { label: string }>(props: {
  ranges: readonly R[];
  current: R;
  pick: (range: R) => void;
}) {
  return (
    <fieldset class="inline">
      <legend>Range</legend>
      {props.ranges.map((r) => (
        <button
          type="button"
          class="tab"
          aria-pressed={r.label === props.current.label ? 'true' : 'false'}
          onClick={() => props.pick(r)}
        >
          {r.label}
        </button>
      ))}
    </fieldset>
  );
}
