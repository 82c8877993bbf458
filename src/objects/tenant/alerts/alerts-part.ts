/**
 * The part of a tenant's TenantGuard that raises and delivers its alerts
 * (docs/OBSERVABILITY.md, "Alerts"): a quota's use crossing a threshold (the limits
 * part reports the quotas it counts), and, from the usage batches, the platform
 * refusing the tenant's key and a share of server errors (health-alerts.ts, over the
 * history part's figures); each into the alert log, and with a webhook into the outbox
 * its alarm delivers from, signed, audited (alerts.ts). Its tables: `alert_config`,
 * `alerts_sent`, `alert_outbox`, `alert_log`.
 */
import { hourOf, type UsageBatch } from '../../../metering/usage';
import { isSealed, open, seal, sealedKid } from '../../../tenants/crypto';
import type { AlertSettings, RecentAlert } from '../../../types/wire';
import type { TenantIo } from '../io';
import type { Chores } from '../part';
import type { Sql } from '../sql';
import {
  type AlertConfig,
  alertSummary,
  type Delivery,
  type DeliveryResult,
  deliverDue,
  migrateAlerts,
  noteQuotaUse,
  type QuotaUse,
  readAlertConfig,
  readAlertLog,
  sendTestAlert,
  sweepAlertsSent,
  writeAlertConfig,
} from './alerts';
import { type HourFigures, noteHealthAlerts } from './health-alerts';

/** What callers reach: the alert settings, log and test, and the key rotation's re-seal. */
export const ALERTS_CALLS = [
  'set',
  'settings',
  'recent',
  'test',
  'resealSecret',
  'deliver',
  'stored',
] as const;

export class AlertsPart implements Chores {
  /** The webhook as stored (undefined: not read yet). */
  private config: AlertConfig | null | undefined;
  /** The hour (its start, ms) of the last batch with failures; undefined until one came in. */
  private failingHour: number | null | undefined;

  constructor(
    private readonly sql: Sql,
    private readonly history: HourFigures,
    private readonly io: Pick<TenantIo, 'tenantId' | 'now' | 'wakeBy' | 'keyRing' | 'audit'>,
  ) {
    migrateAlerts(sql);
  }

  /** Sets the webhook (thresholds in percent, the secret sealed); null removes it. */
  set(config: AlertConfig | null): void {
    writeAlertConfig(this.sql, config);
    this.config = undefined;
  }

  /** The webhook and thresholds, without the signing secret. */
  settings(): AlertSettings | null {
    const config = this.current();
    return (
      config && {
        url: config.url,
        thresholds: config.thresholds,
        server_error_percent: config.serverErrorPercent,
      }
    );
  }

  /** The webhook as stored, its secret sealed (for a sealed backup, and to keep the secret). */
  stored(): AlertConfig | null {
    return this.current();
  }

  /** The alert log, newest first. */
  recent(): RecentAlert[] {
    return readAlertLog(this.sql);
  }

  /** One signed test delivery to the webhook, now; null when none is set. */
  async test(): Promise<Delivery | null> {
    const config = this.current();
    if (!config) return null;
    return sendTestAlert(config, await this.io.keyRing(), this.io.now());
  }

  /**
   * Re-seals the webhook's signing secret under the ring's current key (key rotation,
   * POST /admin/maintenance/reencrypt); true when it did.
   */
  async resealSecret(): Promise<boolean> {
    const config = this.current();
    const ring = await this.io.keyRing();
    if (!config || (isSealed(config.secret) && sealedKid(config.secret) === ring.currentKid)) {
      return false;
    }
    const secret = isSealed(config.secret)
      ? await open(ring, config.secret, config.tenantId)
      : config.secret;
    const sealed = await seal(ring, secret, config.tenantId);
    // The object took other calls while sealing: a webhook set or removed meanwhile wins.
    if (this.current() !== config) return false;
    this.set({ ...config, secret: sealed });
    return true;
  }

  /** Sends the alerts due at `now`, each outcome audited (the alarm; tests pass their own time). */
  async deliver(now: number): Promise<{ results: DeliveryResult[]; nextAt: number | null }> {
    const ring = await this.io.keyRing();
    const delivered = await deliverDue(this.sql, this.current(), ring, now);
    for (const r of delivered.results) {
      await this.io.audit({
        action: `alert.${r.outcome}`,
        tenant_id: r.payload.tenant_id,
        token_id: null,
        request_id: `alert-${r.id}`,
        detail: { ...alertSummary(r.payload), attempts: r.attempts, status: r.status },
      });
    }
    return delivered;
  }

  /**
   * Whether quota alerts are wanted: always, webhook or not (without one they go to the
   * alert log only, at the default thresholds); false only while the tenant is unknown.
   */
  watchesQuotas(): boolean {
    return (this.io.tenantId ?? this.current()?.tenantId) != null;
  }

  /**
   * Raises an alert for each quota whose use has crossed a threshold: into the alert log,
   * and with a webhook into its outbox, which the alarm delivers.
   */
  noteQuotas(uses: QuotaUse[], now: number): void {
    const config = this.current();
    const tenantId = this.io.tenantId ?? config?.tenantId;
    if (!tenantId) return;
    for (const use of uses) {
      const due = noteQuotaUse(this.sql, tenantId, config, use, now);
      // Alarms run on the real clock, whatever time a caller passed in.
      if (due !== null && config) this.io.wakeBy(this.io.now());
    }
  }

  /**
   * A usage batch came in: it can raise an alert for the hours it has failures in (the
   * one before this, too, just past the hour), or for this hour when it had some (its
   * requests may just have reached the minimum); other batches cost no query.
   */
  noteBatch(batch: UsageBatch): void {
    const now = this.io.now();
    const hour = hourOf(now);
    const hours = new Set<number>();
    for (const r of batch.keyRejections ?? []) hours.add(r.hour);
    for (const r of batch.rows) if (r.status === '5xx') hours.add(r.hour);
    if (hours.size > 0) this.failingHour = hour;
    // Unknown after a restart: looked at once.
    if (this.failingHour === undefined || this.failingHour === hour) {
      this.failingHour ??= null;
      hours.add(hour);
    }
    if (hours.size === 0) return;
    const config = this.current();
    const tenantId = this.io.tenantId ?? config?.tenantId;
    if (!tenantId) return;
    if (noteHealthAlerts(this.sql, this.history, tenantId, config, hours, now)) {
      this.io.wakeBy(this.io.now());
    }
  }

  /** Crossings of periods long over. */
  sweep(now: number): void {
    sweepAlertsSent(this.sql, now);
  }

  /** The deliveries due; when the next one is. */
  async catchUp(now: number): Promise<number> {
    const { nextAt } = await this.deliver(now);
    return nextAt ?? Number.POSITIVE_INFINITY;
  }

  /** The webhook, its thresholds and its sealed secret, or null (read once). */
  private current(): AlertConfig | null {
    if (this.config === undefined) this.config = readAlertConfig(this.sql);
    return this.config;
  }
}
