/**
 * The history part alone, on node:sqlite with injected time: batches add up, series
 * come back by hour and day, rows go once past the retention the isolates last sent,
 * the hourly figures count the key's refusals, and the fleet board hears of usage
 * from the alarm, at most once a minute.
 */
import { describe, expect, it } from 'vitest';
import { memorySql } from '../../../../scripts/sim/sqlite';
import { detachedIo } from '../../../../scripts/sim/tenant-io';
import type { UsageBatch } from '../../../metering/usage';
import type { FleetHour } from '../../fleet/fleet-board';
import type { TenantIo } from '../io';
import { GuardSettings } from '../settings';
import { FLEET_REPORT_MS, FLEET_SETTLE_MS } from './fleet-report';
import { HistoryPart } from './history-part';
import type { HistoryQuery } from './rollups';
import { usageRow } from './usage-row.fixture';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = Date.parse('2026-11-24T12:00:00Z');

const usage = usageRow;

function part(io: Partial<TenantIo> = {}) {
  const clock = { now: T0 };
  const sql = memorySql();
  const history = new HistoryPart(
    sql,
    new GuardSettings(sql),
    detachedIo(() => clock.now, io),
  );
  return { clock, history };
}

describe('the history part', () => {
  it('adds batches up and answers series by hour and by day', () => {
    const { history } = part();
    const batch: UsageBatch = {
      rows: [usage(T0, '2xx', 3), usage(T0 + HOUR, '5xx', 1)],
      refusals: [{ hour: T0, tokenId: 'tok_a', policy: 'burst', route: 'team.list', count: 2 }],
    };
    history.take(batch);
    history.take(batch);
    const hourly = history.query({ from: T0, to: T0 + HOUR, granularity: 'hour', groupBy: [] });
    expect(hourly.series.map((p) => [p.t, p.requests])).toEqual([
      [new Date(T0).toISOString(), 6],
      [new Date(T0 + HOUR).toISOString(), 2],
    ]);
    expect(hourly.refusals).toEqual([{ t: new Date(T0).toISOString(), policy: 'burst', count: 4 }]);
    const daily = history.query({
      from: T0,
      to: T0 + HOUR,
      granularity: 'day',
      groupBy: ['status'],
    });
    expect(daily.series.map((p) => [p.status, p.requests])).toEqual([
      ['2xx', 6],
      ['5xx', 2],
    ]);
    expect(history.refusalsByOperation(T0, T0)).toEqual([{ operation: 'team.list', count: 4 }]);
    expect(history.lastUsedHour('tok_a')).toBe(T0 + HOUR);
    expect(history.lastUsedHour('tok_b')).toBeNull();
  });

  it('keeps rows for the retention the isolates last sent (90 days before any)', () => {
    const { history } = part();
    history.take({
      rows: [usage(T0 - 40 * DAY, '2xx', 1), usage(T0 - 10 * DAY, '2xx', 1)],
      refusals: [],
    });
    history.sweep(T0);
    const all: HistoryQuery = { from: 0, to: T0, granularity: 'hour', groupBy: [] };
    expect(history.query(all).series).toHaveLength(2);
    history.take({ rows: [], refusals: [] }, 30);
    history.sweep(T0);
    expect(history.query(all).series.map((p) => p.t)).toEqual([
      new Date(T0 - 10 * DAY).toISOString(),
    ]);
  });

  it("counts the key's refusals by hour and status in the hour's figures", () => {
    const { history } = part();
    history.take({
      rows: [usage(T0, '2xx', 10), usage(T0, '5xx', 4), usage(T0, '4xx', 3)],
      refusals: [{ hour: T0, tokenId: 'tok_a', policy: 'burst', count: 3 }],
      keyRejections: [
        { hour: T0, status: 401, count: 2, at: T0 + 10 },
        { hour: T0, status: 403, count: 1, at: T0 + 20 },
      ],
    });
    expect(history.keyRejectionsIn(T0)).toEqual([
      { status: 401, count: 2 },
      { status: 403, count: 1 },
    ]);
    // With the 4xx and the latency histogram (all in the first bucket here), which the
    // fleet board adds up for the overview's series.
    expect(history.figures(T0)).toEqual([
      {
        hour: T0,
        requests: 17,
        self_service: 0,
        refused: 3,
        errors_5xx: 4,
        errors_4xx: 3,
        latency: [17, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        key_rejected: 3,
        key_status: 403,
      },
    ]);
  });

  it('reports to the fleet board from the alarm, at most once a minute, and again after a failure', async () => {
    const reports: FleetHour[][] = [];
    const wakes: number[] = [];
    let failing = false;
    const { clock, history } = part({
      tenantId: 'ten_a',
      wakeBy: (at) => wakes.push(at),
      reportToFleet: async (_tenant, hours) => {
        if (failing) throw new Error('board unreachable');
        reports.push(hours);
      },
    });
    history.take({ rows: [usage(T0, '2xx', 5)], refusals: [] });
    expect(wakes).toEqual([T0 + FLEET_SETTLE_MS]);
    expect(await history.catchUp(T0 + FLEET_SETTLE_MS)).toBe(Number.POSITIVE_INFINITY);
    expect(reports.map((r) => r.map((h) => h.requests))).toEqual([[5]]);
    // Usage again at once: the next report waits for the minute.
    clock.now = T0 + FLEET_SETTLE_MS + 1000;
    history.take({ rows: [usage(T0, '2xx', 1)], refusals: [] });
    expect(wakes.at(-1)).toBe(T0 + FLEET_SETTLE_MS + FLEET_REPORT_MS);
    expect(await history.catchUp(clock.now)).toBe(T0 + FLEET_SETTLE_MS + FLEET_REPORT_MS);
    failing = true;
    const at = T0 + FLEET_SETTLE_MS + FLEET_REPORT_MS;
    expect(await history.catchUp(at)).toBe(at + FLEET_REPORT_MS);
    failing = false;
    expect(await history.catchUp(at + FLEET_REPORT_MS)).toBe(Number.POSITIVE_INFINITY);
    expect(reports.map((r) => r.map((h) => h.requests))).toEqual([[5], [6]]);
    expect(await history.catchUp(at + 3 * FLEET_REPORT_MS)).toBe(Number.POSITIVE_INFINITY);
    expect(reports).toHaveLength(2);
  });
});
