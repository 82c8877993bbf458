/**
 * A tenant's TenantGuard, its parts put together over one SQLite and one TenantIo:
 * each part owns its tables (docs/STORAGE.md, "Who may touch which table"), and is
 * handed what it reads of the others (the tokens' and the tenant's standing, the
 * history's figures) and the calls it makes on them (brokers told, usage taken). The
 * Durable Object (tenant-guard.ts) routes callers' calls to a part, and its alarm here; the
 * fleet simulation and the unit tests use this very class on node:sqlite.
 *
 * A new part: a folder with its class (a Chores, its calls a const list beside it), a
 * field here, a line in PARTS (tenant-guard.ts), its tables in
 * scripts/check-layers.ts (TABLE_OWNERS) and docs/STORAGE.md.
 */
import type { UsageBatch } from '../../metering/usage';
import { AlertsPart } from './alerts/alerts-part';
import { ExportPart } from './export/export-part';
import { GrantsPart } from './grants/grants-part';
import { HistoryPart } from './history/history-part';
import { IdempotencyPart } from './idempotency/idempotency-part';
import type { TenantIo } from './io';
import { LimitsPart } from './limits/limits-part';
import { type Chores, SWEEP_EVERY_MS } from './part';
import { RecentRequestsPart } from './recent/recent-requests-part';
import { TenantRecordPart } from './record/tenant-record-part';
import { TenantStanding } from './record/tenant-standing';
import { GuardSettings } from './settings';
import type { Sql } from './sql';
import { TokenStanding } from './tokens/token-standing';
import { TokensPart } from './tokens/tokens-part';

export class TenantParts {
  readonly limits: LimitsPart;
  readonly tokens: TokensPart;
  readonly tenantRecord: TenantRecordPart;
  readonly idempotency: IdempotencyPart;
  readonly recentRequests: RecentRequestsPart;
  readonly history: HistoryPart;
  readonly alerts: AlertsPart;
  readonly grants: GrantsPart;
  readonly export: ExportPart;
  /** What admission reads of the tokens (the tokens part decides it). */
  readonly tokenStanding: TokenStanding;
  /** The disabled flag and cache version (the tenant-record part decides them). */
  readonly tenantStanding: TenantStanding;
  /** In the order the alarm runs them. */
  private readonly chores: Chores[];

  constructor(sql: Sql, io: TenantIo) {
    const settings = new GuardSettings(sql);
    const tellBrokers = (push: Parameters<LimitsPart['tellBrokers']>[0]) =>
      this.limits.tellBrokers(push);
    this.tokenStanding = new TokenStanding(sql);
    this.tenantStanding = new TenantStanding(settings);
    this.history = new HistoryPart(sql, settings, io);
    this.recentRequests = new RecentRequestsPart(sql, io.now);
    this.alerts = new AlertsPart(sql, this.history, io);
    this.export = new ExportPart(sql, {
      history: this.history,
      plan: () => this.limits.planName(),
      io,
    });
    this.idempotency = new IdempotencyPart(sql, (id) => this.tokenStanding.lineOf(id), io);
    this.tokens = new TokensPart(sql, {
      settings,
      standing: this.tokenStanding,
      io,
      tellBrokers,
      lastUsedHour: (id) => this.history.lastUsedHour(id),
    });
    this.grants = new GrantsPart(sql, {
      settings,
      tokens: this.tokens.decider(),
      lastUsedHour: (id) => this.history.lastUsedHour(id),
    });
    this.tenantRecord = new TenantRecordPart(sql, {
      standing: this.tenantStanding,
      io,
      tellBrokers,
    });
    this.limits = new LimitsPart(sql, {
      settings,
      tokens: this.tokenStanding,
      tenant: this.tenantStanding,
      alerts: this.alerts,
      history: this.history,
      takeUsage: (batch, retentionDays) => this.takeUsage(batch, retentionDays),
      io,
    });
    this.chores = [
      this.limits,
      this.history,
      this.recentRequests,
      this.alerts,
      this.export,
      this.idempotency,
      this.tokens,
      this.grants,
      this.tenantRecord,
    ];
  }

  /**
   * The alarm's work: rows that no longer count anywhere, then what calls left to it
   * (token writes, a record change half written, alert deliveries, the fleet report);
   * when the alarm is wanted next (at the latest SWEEP_EVERY_MS from now).
   */
  async alarm(now: number): Promise<number> {
    for (const part of this.chores) part.sweep?.(now);
    let next = now + SWEEP_EVERY_MS;
    const catchingUp: Chores[] = [
      this.tokens,
      this.tenantRecord,
      this.alerts,
      this.history,
      this.export,
    ];
    for (const part of catchingUp) next = Math.min(next, (await part.catchUp?.(now)) ?? next);
    return next;
  }

  /** A usage batch an isolate gathered: history, recent requests, the alerts it may raise. */
  private takeUsage(batch: UsageBatch, retentionDays?: number): void {
    this.history.take(batch, retentionDays);
    if (batch.minutes) this.export.takeMinutes(batch.minutes);
    if (batch.requests) this.recentRequests.take(batch.requests);
    this.alerts.noteBatch(batch);
  }
}
