import { describe, expect, it } from 'vitest';
import { HOUR_MS } from '../metering/usage';
import type { BoardSeries } from '../objects/fleet/fleet-series';
import { mergeSeries } from './series-merge';

const H0 = Date.UTC(2026, 10, 29, 10);
const histogram = (at: Record<number, number>) => Array.from({ length: 12 }, (_, i) => at[i] ?? 0);
const hourOf = (hour: number, requests: number, latency: number[], extra = {}) => ({
  hour,
  requests,
  errors_4xx: 0,
  errors_5xx: 0,
  refused: 0,
  latency,
  ...extra,
});
const tenant = (hour: number, id: string, requests: number, extra = {}) => ({
  hour,
  tenant_id: id,
  requests,
  errors_4xx: 0,
  errors_5xx: 0,
  refused: 0,
  ...extra,
});

describe('the fleet series, merged from its boards', () => {
  it("takes the fleet's p95 from the boards' histograms added up, not from their p95s", () => {
    // Board one: 90 requests at ≤ 10 ms. Board two: 10 at ≤ 2500 ms. Each board's own p95
    // is 10 and 2500 ms; the fleet's 95th request is among the slow ones: 2500 ms.
    const boards: BoardSeries[] = [
      { hours: [hourOf(H0, 90, histogram({ 1: 90 }))], tops: [] },
      { hours: [hourOf(H0, 10, histogram({ 8: 10 }))], tops: [] },
    ];
    const { points } = mergeSeries(boards, H0, 1);
    expect(points[0]).toMatchObject({ requests: 100, p50_ms: 10, p95_ms: 2500 });
  });

  it('fills every hour, and names the busiest tenants of each hour across boards', () => {
    const boards: BoardSeries[] = [
      {
        hours: [hourOf(H0 + HOUR_MS, 60, histogram({ 0: 60 }), { errors_5xx: 2 })],
        tops: [
          tenant(H0 + HOUR_MS, 'ten_a', 50, { errors_5xx: 2 }),
          tenant(H0 + HOUR_MS, 'ten_b', 10),
        ],
      },
      {
        hours: [hourOf(H0 + HOUR_MS, 30, histogram({ 0: 30 }))],
        tops: [tenant(H0 + HOUR_MS, 'ten_c', 30)],
      },
    ];
    const { points, tenantIds } = mergeSeries(boards, H0, 3);
    expect(points.map((p) => [p.t, p.requests])).toEqual([
      [new Date(H0).toISOString(), 0],
      [new Date(H0 + HOUR_MS).toISOString(), 90],
      [new Date(H0 + 2 * HOUR_MS).toISOString(), 0],
    ]);
    const named = (pairs: [number, number][]) => pairs.map(([i, n]) => [tenantIds[i], n]);
    expect(named(points[1]?.top.requests ?? [])).toEqual([
      ['ten_a', 50],
      ['ten_c', 30],
      ['ten_b', 10],
    ]);
    // Only those with some of a figure are named for it.
    expect(named(points[1]?.top.errors_5xx ?? [])).toEqual([['ten_a', 2]]);
    expect(points[0]).toMatchObject({ p95_ms: null, top: { requests: [] } });
  });

  it("indexes the newest hour's tenants first (the answer names the first 200)", () => {
    const boards: BoardSeries[] = [
      {
        hours: [hourOf(H0, 5, histogram({})), hourOf(H0 + 2 * HOUR_MS, 5, histogram({}))],
        tops: [tenant(H0, 'ten_old', 5), tenant(H0 + 2 * HOUR_MS, 'ten_new', 5)],
      },
    ];
    expect(mergeSeries(boards, H0, 3).tenantIds).toEqual(['ten_new', 'ten_old']);
  });
});
