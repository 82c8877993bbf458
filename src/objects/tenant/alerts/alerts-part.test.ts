/**
 * The alerts part alone, on node:sqlite with injected time, beside a real history
 * part for the hourly figures: quota crossings raise one alert each per period and
 * threshold, a batch with the key refused or many server errors raises its alert once
 * an hour, webhook or not, and the webhook's settings never show its secret.
 * (Deliveries over HTTP: test/alerts.test.ts, in workerd against the emulator.)
 */
import { describe, expect, it } from 'vitest';
import { memorySql } from '../../../../scripts/sim/sqlite';
import { detachedIo } from '../../../../scripts/sim/tenant-io';
import type { UsageRow } from '../../../metering/usage';
import { HistoryPart } from '../history/history-part';
import { usageRow } from '../history/usage-row.fixture';
import { GuardSettings } from '../settings';
import type { AlertConfig, QuotaUse } from './alerts';
import { AlertsPart } from './alerts-part';
import { SERVER_ERROR_MIN_REQUESTS } from './health-alerts';

const HOUR = 3_600_000;
const T0 = Date.parse('2026-11-24T12:10:00Z');
const HOUR0 = Date.parse('2026-11-24T12:00:00Z');
const webhook: AlertConfig = {
  tenantId: 'ten_a',
  url: 'https://hooks.example/alerts',
  thresholds: [80, 100],
  serverErrorPercent: 10,
  secret: 'v1.k1.sealed',
};

function part() {
  const clock = { now: T0 };
  const wakes: number[] = [];
  const sql = memorySql();
  const io = detachedIo(() => clock.now, { tenantId: 'ten_a', wakeBy: (at) => wakes.push(at) });
  const history = new HistoryPart(sql, new GuardSettings(sql), io);
  return { clock, wakes, history, alerts: new AlertsPart(sql, history, io) };
}

const daily = (used: number, periodStart = HOUR0 - 12 * HOUR): QuotaUse => ({
  meter: 'quota:daily',
  policy: 'daily',
  used,
  limit: 100,
  periodStart,
  periodEnd: periodStart + 24 * HOUR,
});

const rows = (status: UsageRow['status'], requests: number) => usageRow(HOUR0, status, requests);

describe('the alerts part', () => {
  it('keeps the webhook, and shows it without its secret', () => {
    const { alerts } = part();
    expect(alerts.settings()).toBeNull();
    expect(alerts.stored()).toBeNull();
    alerts.set(webhook);
    expect(alerts.settings()).toEqual({
      url: webhook.url,
      thresholds: [80, 100],
      server_error_percent: 10,
    });
    expect(JSON.stringify(alerts.settings())).not.toContain('sealed');
    // As stored, its secret still sealed (a sealed backup, a webhook kept by the fleet file).
    expect(alerts.stored()).toEqual(webhook);
  });

  it('raises quota alerts without a webhook too: into the log, at the default thresholds', () => {
    const { alerts, wakes } = part();
    expect(alerts.watchesQuotas()).toBe(true);
    alerts.noteQuotas([daily(85)], T0);
    alerts.noteQuotas([daily(100)], T0);
    alerts.noteQuotas([daily(100)], T0);
    expect(
      alerts.recent().map((a) => [a.alert.kind === 'quota' && a.alert.threshold, a.delivery]),
    ).toEqual([
      [100, 'no_webhook'],
      [80, 'no_webhook'],
    ]);
    // Nothing to deliver: the alarm is not woken for them.
    expect(wakes).toEqual([]);
  });

  it('raises a quota alert once per period and threshold crossed, and wakes the alarm', () => {
    const { alerts, wakes } = part();
    alerts.set(webhook);
    alerts.noteQuotas([daily(79)], T0);
    expect(alerts.recent()).toEqual([]);
    alerts.noteQuotas([daily(85)], T0);
    alerts.noteQuotas([daily(90)], T0);
    alerts.noteQuotas([daily(100)], T0);
    // The next day's period crosses 80 % again.
    alerts.noteQuotas([daily(80, HOUR0 + 12 * HOUR)], T0);
    const log = alerts.recent();
    expect(log.map((a) => [a.alert.kind === 'quota' && a.alert.threshold, a.delivery])).toEqual([
      [80, 'pending'],
      [100, 'pending'],
      [80, 'pending'],
    ]);
    expect(wakes).toEqual([T0, T0, T0]);
  });

  it('raises the key-refused and server-error alerts of a batch once an hour, with no webhook too', () => {
    const { alerts, history, wakes } = part();
    const batch = {
      rows: [rows('2xx', SERVER_ERROR_MIN_REQUESTS), rows('5xx', 5)],
      refusals: [],
      keyRejections: [{ hour: HOUR0, status: 401, count: 2, at: T0 }],
    };
    history.take(batch);
    alerts.noteBatch(batch);
    history.take(batch);
    alerts.noteBatch(batch);
    const log = alerts.recent();
    expect(log.map((a) => [a.alert.kind, a.delivery])).toEqual([
      ['server_errors', 'no_webhook'],
      ['platform_key_rejected', 'no_webhook'],
    ]);
    // Raised with the first batch: 5 errors, 2 of them the key's refusals, of 25 requests.
    expect(log[0]?.alert).toMatchObject({ errors: 3, requests: 25, share_percent: 12 });
    // Nothing to deliver without a webhook: the alarm is not woken for it.
    expect(wakes.filter((at) => at === T0)).toEqual([]);
  });

  it('forgets the crossings of periods long over', () => {
    const { alerts, clock } = part();
    alerts.set(webhook);
    const old = daily(100, HOUR0 - 70 * 24 * HOUR);
    alerts.noteQuotas([old], T0);
    alerts.sweep(clock.now);
    alerts.noteQuotas([old], T0);
    expect(alerts.recent()).toHaveLength(4);
  });
});
