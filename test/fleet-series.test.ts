/**
 * The fleet's series (GET /admin/overview/series, docs/OBSERVABILITY.md, "Fleet
 * overview"): a fleet board sums its tenants' hours, latency histograms included, and
 * names each hour's busiest tenants by each figure; the overview adds up the 16 boards,
 * takes the fleet's p95 from the summed histograms, and says whose share an hour is.
 */
import { runDurableObjectAlarm } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HOUR_MS, hourOf } from '../src/metering/usage';
import { KEPT_HOURS } from '../src/objects/fleet/fleet-board';
import { FLEET_REPORT_MS } from '../src/objects/tenant/history/fleet-report';
import { admin, asTenant, createTenant, envelope, type TestTenant, testEnv } from './helpers';

afterEach(() => vi.useRealTimers());

/** A board of its own (not one of the 16 the tenants report to): nothing else writes it. */
const ownBoard = () =>
  testEnv.FLEET_BOARD.get(testEnv.FLEET_BOARD.idFromName(`test:${crypto.randomUUID()}`));

const zeros = () => Array.from({ length: 12 }, () => 0);
const histogram = (at: Record<number, number>) => zeros().map((_, i) => at[i] ?? 0);

describe('a fleet board', () => {
  it("sums its tenants' hours and names each hour's busiest by each figure", async () => {
    const board = ownBoard();
    const now = Date.now();
    const hour = hourOf(now);
    const figures = (requests: number, extra: Partial<Record<string, number>> = {}) => ({
      requests,
      refused: 0,
      errors_5xx: 0,
      errors_4xx: 0,
      key_rejected: 0,
      key_status: null,
      ...extra,
    });
    await board.report(
      'ten_aaaaaaaaaaaaaaaa',
      [
        { hour: hour - HOUR_MS, ...figures(10), latency: histogram({ 0: 10 }) },
        { hour, ...figures(90, { errors_4xx: 9, refused: 4 }), latency: histogram({ 1: 90 }) },
      ],
      now,
    );
    await board.report(
      'ten_bbbbbbbbbbbbbbbb',
      [{ hour, ...figures(10, { errors_5xx: 3 }), latency: histogram({ 9: 10 }) }],
      now,
    );
    // A guard older than the series: no 4xx, no histogram; counted as none.
    await board.report('ten_cccccccccccccccc', [{ hour, ...figures(1) }], now);
    // An hour older than the board keeps is not taken.
    await board.report(
      'ten_dddddddddddddddd',
      [{ hour: hour - KEPT_HOURS * HOUR_MS, ...figures(1000) }],
      now,
    );

    const { hours, tops } = await board.series(hour - KEPT_HOURS * HOUR_MS);
    expect(hours.map((h) => [h.hour, h.requests, h.errors_4xx, h.errors_5xx, h.refused])).toEqual([
      [hour - HOUR_MS, 10, 0, 0, 0],
      [hour, 101, 9, 3, 4],
    ]);
    // The histograms add up, bucket by bucket.
    expect(hours[1]?.latency).toEqual(histogram({ 1: 90, 9: 10 }));
    const inHour = tops.filter((t) => t.hour === hour);
    expect(inHour.map((t) => t.tenant_id).sort()).toEqual([
      'ten_aaaaaaaaaaaaaaaa',
      'ten_bbbbbbbbbbbbbbbb',
      'ten_cccccccccccccccc',
    ]);
    expect(inHour.find((t) => t.tenant_id === 'ten_bbbbbbbbbbbbbbbb')?.errors_5xx).toBe(3);
  });

  it('names at most 5 tenants an hour by each figure', async () => {
    const board = ownBoard();
    const now = Date.now();
    const hour = hourOf(now);
    for (let i = 0; i < 8; i++) {
      await board.report(
        `ten_${String(i).repeat(16)}`,
        [
          {
            hour,
            requests: 100 + i,
            refused: 0,
            errors_5xx: 0,
            errors_4xx: 0,
            key_rejected: 0,
            key_status: null,
            latency: zeros(),
          },
        ],
        now,
      );
    }
    const { tops } = await board.series(hour);
    expect(tops.map((t) => t.requests).sort()).toEqual([103, 104, 105, 106, 107]);
  });
});

/** Exact mode: each request's guard call carries the usage of the ones before it. */
async function exactWith(t: TestTenant) {
  await admin(`/tenants/${t.id}/limits`, {
    method: 'PUT',
    body: JSON.stringify({ policies: [], quota: {}, limiter: 'exact' }),
  });
}

describe('GET /admin/overview/series', () => {
  it("adds up the boards hour by hour, with each hour's busiest tenants and their names", async () => {
    const busy = await createTenant(undefined, 'series busy');
    await exactWith(busy);
    // The 404s first: their usage rides on the next guard call, which only a limited route makes.
    for (let i = 0; i < 5; i++) await asTenant(busy, '/no/such/route');
    for (let i = 0; i < 30; i++) await asTenant(busy, '/agent/lists');
    // Each guard reports from its alarm, at most once a minute: a minute on, run it now.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + FLEET_REPORT_MS + 1000 });
    await runDurableObjectAlarm(testEnv.TENANT_GUARD.get(testEnv.TENANT_GUARD.idFromName(busy.id)));
    vi.useRealTimers();

    const res = await admin('/overview/series?hours=24');
    expect(res.status).toBe(200);
    const s = (await envelope(res)).data;
    expect(s.hours).toBe(24);
    expect(s.points).toHaveLength(24);
    expect(s.shards).toBe(16);
    // Hour after hour, the running one last.
    const last = s.points[23];
    expect(Date.parse(last.t)).toBe(hourOf(Date.now()));
    expect(Date.parse(s.points[0].t)).toBe(hourOf(Date.now()) - 23 * HOUR_MS);
    // Each request but the last of each tenant is in (the last rides on a later call).
    const who = (figure: string, id: string) => {
      const at = last.top[figure].find(([i]: [number, number]) => s.tenants[i].tenant_id === id);
      return at ? { count: at[1], name: s.tenants[at[0]].name } : null;
    };
    expect(who('requests', busy.id)?.count).toBeGreaterThanOrEqual(34);
    expect(who('requests', busy.id)?.name).toMatch(/^series busy/);
    expect(who('errors_4xx', busy.id)?.count).toBe(5);
    expect(who('errors_5xx', busy.id)).toBeNull();
    expect(last.requests).toBeGreaterThanOrEqual(34);
    expect(last.errors_4xx).toBeGreaterThanOrEqual(5);
    // A latency bucket's bound, from the histograms.
    expect([1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000]).toContain(last.p95_ms);
    for (const figure of ['requests', 'errors_4xx', 'errors_5xx', 'refused']) {
      expect(last.top[figure].length).toBeLessThanOrEqual(5);
    }

    const week = (await envelope(await admin('/overview/series?hours=168'))).data;
    expect(week.points).toHaveLength(168);
    expect((await admin('/overview/series?hours=169')).status).toBe(400);
  });
});
