/**
 * The part of a tenant's TenantGuard that keeps its usage history (docs/STORAGE.md):
 * hourly rollups and refusals (rollups.ts), the platform's refusals of the tenant's
 * key (key-rejections.ts), taken from the isolates' usage batches and kept for the
 * retention the isolates last sent (`USAGE_RETENTION_DAYS`); and its reports to the
 * fleet board (fleet-report.ts). Its tables: `usage_hourly`, `refusals_hourly`,
 * `key_rejections_hourly`; its setting: `retention_days`.
 */
import { DEFAULT_USAGE_RETENTION_DAYS, type UsageBatch } from '../../../metering/usage';
import type { FleetHour } from '../../fleet/fleet-board';
import type { TenantIo } from '../io';
import type { Chores } from '../part';
import type { SettingsView } from '../settings';
import type { Sql } from '../sql';
import { FleetReport } from './fleet-report';
import {
  hourFigures,
  keyRejectionsIn,
  migrateKeyRejections,
  recordKeyRejections,
  sweepKeyRejections,
} from './key-rejections';
import {
  billableByDay,
  type History,
  type HistoryQuery,
  lastUsedHour,
  migrateRollups,
  queryHistory,
  recordRollups,
  refusalsByOperation,
  sweepRollups,
} from './rollups';

/** What callers reach: the usage series (the operator API). */
export const HISTORY_CALLS = ['query'] as const;

export class HistoryPart implements Chores {
  private readonly fleet: FleetReport;

  constructor(
    private readonly sql: Sql,
    private readonly settings: SettingsView<'retention_days'>,
    io: Pick<TenantIo, 'tenantId' | 'now' | 'wakeBy' | 'reportToFleet'>,
  ) {
    migrateRollups(sql);
    migrateKeyRejections(sql);
    this.fleet = new FleetReport(io, (from) => this.figures(from));
  }

  /** Usage series between `from` and `to`, by hour or UTC day, grouped as asked. */
  query(q: HistoryQuery): History {
    return queryHistory(this.sql, q);
  }

  /**
   * A usage batch an isolate gathered (limits/usage-buffer.ts) adds up; `retentionDays`
   * is the retention the isolates last sent, kept for the sweep. The fleet board hears of it.
   */
  take(batch: UsageBatch, retentionDays?: number): void {
    recordRollups(this.sql, batch);
    if (batch.keyRejections) recordKeyRejections(this.sql, batch.keyRejections);
    if (
      retentionDays !== undefined &&
      String(retentionDays) !== this.settings.get('retention_days')
    ) {
      this.settings.put('retention_days', String(retentionDays));
    }
    this.fleet.noteUsage();
  }

  /** Refusals between `from` and `to` by the operation refused, most first. */
  refusalsByOperation(from: number, to: number): { operation: string; count: number }[] {
    return refusalsByOperation(this.sql, from, to);
  }

  /** Billable requests by UTC day, from day `from` to day `to` (ms, inclusive). */
  billableByDay(from: number, to: number): Map<number, number> {
    return billableByDay(this.sql, from, to);
  }

  /** The retention, in days, the isolates last sent. */
  retentionDays(): number {
    return Number(this.settings.get('retention_days') ?? DEFAULT_USAGE_RETENTION_DAYS);
  }

  /** The start of the last hour a token made a request in; null: none the history keeps. */
  lastUsedHour(tokenId: string): number | null {
    return lastUsedHour(this.sql, tokenId);
  }

  /** The tenant's figures by hour since `from` (fleet reports, the alerts beyond quotas). */
  figures(from: number): FleetHour[] {
    return hourFigures(this.sql, from);
  }

  /** The key's refusals in one hour, by status. */
  keyRejectionsIn(hour: number): { status: number; count: number }[] {
    return keyRejectionsIn(this.sql, hour);
  }

  /** Rows older than the retention. */
  sweep(now: number): void {
    const days = this.retentionDays();
    sweepRollups(this.sql, now - days * 86_400_000);
    sweepKeyRejections(this.sql, now - days * 86_400_000);
  }

  /** The fleet report, when one is due. */
  catchUp(now: number): Promise<number> {
    return this.fleet.send(now);
  }
}
