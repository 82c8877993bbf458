/**
 * src/guard/ is the code Durable Objects run:
 * - TenantGuard (this file): one SQLite-backed Durable Object per tenant, the
 *   single writer of its counters, leases, tokens, cache version and
 *   settings, and of the tenant's KV record (tenant-record.ts). The work is
 *   core.ts; this shell adds what needs the runtime: the alarm, alert
 *   deliveries (fetch, audit log), the key ring, and writing the tokens it
 *   decided to KV (token-changes.ts, token-registry.ts);
 * - its storage: store.ts (settings, token states), ledger.ts and slots.ts
 *   (units counted per meter and window), history.ts (usage history),
 *   alerts.ts (quota alerts, sent from its alarm), idempotency.ts (the
 *   answers of writes sent with an Idempotency-Key), kept-record.ts (the
 *   tenant's record as decided here), all over sql.ts;
 * - the regional lease brokers between isolates and the guard: lease-broker.ts
 *   (the Durable Object), broker.ts (its pool) and broker-*.ts.
 * The terms isolates and the guard share (policies and meters, the lease
 * protocol, lease windows, usage rows) are src/metering/, below both; the
 * isolate's side, which calls the guard, is src/limits/; nothing here imports
 * it (docs/ARCHITECTURE.md).
 */
import { DurableObject } from 'cloudflare:workers';
import { auditLog } from '../audit/audit-log';
import { log } from '../log';
import type { BrokerPush, LeaseRequest, Returned } from '../metering/lease-protocol';
import type { Limits, TokenLimits } from '../metering/policy';
import { HOUR_MS, hourOf, type UsageBatch } from '../metering/usage';
import { isSealed, keyRing, open, seal, sealedKid } from '../tenants/crypto';
import type { TenantPatch } from '../tenants/tenant-store';
import {
  eraseTokenRecord,
  indexedTokens,
  type TokenEntry,
  writeTokenRecord,
} from '../tenants/token-store';
import type { StoredTenant } from '../types/tenants';
import { waitUntilDone } from '../waiters';
import {
  type AlertConfig,
  alertSummary,
  type Delivery,
  type DeliveryResult,
  deliverDue,
  sendTestAlert,
} from './alerts';
import { newCacheVersion, versionForKey } from './cache-version';
import { GuardCore, SWEEP_EVERY_MS } from './core';
import { FLEET_REPORT_MS, FLEET_SETTLE_MS, fleetBoardOf } from './fleet-board';
import type { HistoryQuery } from './history';
import type { ClaimRequest, KeyOwner, StoredAnswer } from './idempotency';
import type { PlanPush } from './plan-protocol';
import type { RecentQuery } from './recent-requests';
import { type RecordChange, type ResealOutcome, TenantRecord } from './tenant-record';
import type { RestoredToken, RevokeOutcome, TokenAmendment, TokenSpecOf } from './token-changes';
import type { AuditContext, MintedToken, RotateOutcome } from './token-registry';

/** A decision KV has not taken yet is tried again by the alarm this soon. */
const RESYNC_AFTER_MS = 5000;
/** A write to KV that failed is tried once more, after this pause (KV takes one write a second per key). */
const KV_RETRY_MS = 1100;
/**
 * Rounds of writing one call makes at most before it answers; the alarm writes the rest.
 * A change is decided (and answered) first: should KV refuse twice, or other calls keep
 * deciding for 10 rounds, KV holds it only once the alarm has written it (logged as
 * `tokens.sync_failed` or `tokens.sync_deferred`; docs/SECURITY.md, "Token changes are
 * decided in one place").
 */
const SYNC_ROUNDS = 10;

/** The TenantGuard of one tenant. */
export function guardFor(
  env: { TENANT_GUARD: DurableObjectNamespace<TenantGuard> },
  tenantId: string,
) {
  return env.TENANT_GUARD.get(env.TENANT_GUARD.idFromName(tenantId));
}

export class TenantGuard extends DurableObject {
  private readonly core: GuardCore;
  /** The tenant's KV record, changed one call at a time (tenant-record.ts). */
  private readonly tenantRecord: TenantRecord;
  /** When the alarm is set for, as far as this object knows (undefined: not known). */
  private alarmAt: number | null | undefined;
  /** The one read of KV's tokens in progress for adoption (tokensReady). */
  private adopting: Promise<void> | null = null;
  /** A call is writing decided token records to KV (syncTokens). */
  private syncing = false;
  /**
   * Usage came in since the last fleet report. True at first: usage recorded before
   * this object last went away may not have been reported.
   */
  private fleetDue = true;
  /** The alarm is set for the next report. */
  private fleetScheduled = false;
  private fleetReportedAt = 0;

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    // Its name is its tenant's id (guardFor): alerts and fleet reports name the tenant.
    this.core = new GuardCore(ctx.storage.sql, (at) => this.scheduleAlarm(at), ctx.id.name ?? null);
    this.tenantRecord = new TenantRecord(env, ctx.storage.sql, {
      follow: (change, asked) => this.followRecord(change, asked),
      retryLater: () => this.scheduleAlarm(Date.now() + RESYNC_AFTER_MS),
    });
  }

  /** The one call lease holders make (core.ts). */
  acquire(req: LeaseRequest) {
    if (req.usage) this.noteFleetUsage();
    return this.core.acquire(req);
  }

  record(batch: UsageBatch, retentionDays?: number, returns?: Returned[]) {
    this.noteFleetUsage();
    this.core.record(batch, retentionDays, returns);
  }

  /** The tenant's recent requests, newest first (recent-requests.ts). */
  recentRequests(q: RecentQuery) {
    return this.core.recentRequests(q);
  }

  /** The alert log, newest first (alerts.ts). */
  recentAlerts() {
    return this.core.recentAlerts();
  }

  history(q: HistoryQuery) {
    return this.core.history(q);
  }

  /**
   * A token's own view in one call: the meters now (the token's own too), and for each
   * range its history and its refusals by operation.
   */
  ownView(now: number, defaults: Limits, tokenId: string, queries: HistoryQuery[]) {
    return {
      usage: this.core.usage(now, defaults, tokenId),
      history: queries.map((q) => ({
        ...this.core.history(q),
        byOperation: this.core.refusalsByOperation(q.from, q.to),
      })),
    };
  }

  usage(now: number, defaults: Limits, tokenId?: string) {
    return this.core.usage(now, defaults, tokenId);
  }

  /** The tenant's own limits (null: its plan's, or the defaults); the limits now in force. */
  async setLimits(limits: Limits | null, defaults: Limits): Promise<Limits> {
    this.core.setLimits(limits);
    await this.tellBrokers({ kind: 'reset' });
    return this.core.limitsInForce(defaults);
  }

  /** The PlanBook's decision about this tenant's plan (plan-protocol.ts). */
  async applyPlan(push: PlanPush): Promise<void> {
    if (this.core.applyPlan(push)) await this.tellBrokers({ kind: 'reset' });
  }

  /**
   * Token changes (token-changes.ts): each is decided here, one call at a time, then
   * written to KV and the audit log in decision order before the call answers.
   */
  async issueToken(
    tenantId: string,
    minted: MintedToken,
    spec: TokenSpecOf,
    limits: TokenLimits | null,
    now: number,
  ): Promise<TokenEntry> {
    await this.tokensReady(tenantId);
    const issued = this.core.tokenChanges.issue(tenantId, minted, spec, limits, now);
    await this.syncTokens();
    if (limits) await this.tellBrokers({ kind: 'reset' });
    return issued;
  }

  async rotateToken(
    tenantId: string,
    oldId: string,
    minted: MintedToken,
    until: number,
    now: number,
    ctx: AuditContext,
  ): Promise<RotateOutcome> {
    await this.tokensReady(tenantId);
    const { outcome, pushes } = this.core.tokenChanges.rotate(oldId, minted, until, now, ctx);
    await this.syncTokens();
    for (const push of pushes) await this.tellBrokers(push);
    return outcome;
  }

  async revokeToken(
    tenantId: string,
    tokenId: string,
    withSuccessors: boolean,
    now: number,
    ctx: AuditContext,
  ): Promise<RevokeOutcome> {
    await this.tokensReady(tenantId);
    const { outcome, pushes } = this.core.tokenChanges.revoke(tokenId, withSuccessors, now, ctx);
    await this.syncTokens();
    for (const push of pushes) await this.tellBrokers(push);
    return outcome;
  }

  /** A token's own limits; false when the tenant has no such (unrevoked) token. */
  async setTokenLimits(tenantId: string, tokenId: string, limits: TokenLimits | null) {
    await this.tokensReady(tenantId);
    if (!this.core.tokenChanges.setLimits(tokenId, limits)) return false;
    await this.tellBrokers({ kind: 'reset' });
    return true;
  }

  /** A working token's name, scopes or expiry changed in place; null when there is none. */
  async amendToken(
    tenantId: string,
    tokenId: string,
    patch: TokenAmendment,
  ): Promise<TokenEntry | null> {
    await this.tokensReady(tenantId);
    const amended = this.core.tokenChanges.amend(tokenId, patch);
    await this.syncTokens();
    return amended;
  }

  /** Tokens taken back from a sealed backup; the ids it took (those it held already are left). */
  async restoreTokens(tenantId: string, tokens: RestoredToken[]): Promise<string[]> {
    await this.tokensReady(tenantId);
    const taken = tokens
      .filter((t) => t.record.tenant_id === tenantId && this.core.tokenChanges.restore(t))
      .map((t) => t.record.id);
    await this.syncTokens();
    if (tokens.some((t) => t.limits)) await this.tellBrokers({ kind: 'reset' });
    return taken;
  }

  /** The working tokens heading their families, with hashes and own limits (sealed backups). */
  async tokenHeads(tenantId: string, now: number): Promise<RestoredToken[]> {
    await this.tokensReady(tenantId);
    return this.core.tokenChanges.heads(now);
  }

  async listTokens(tenantId: string, now: number) {
    await this.tokensReady(tenantId);
    return this.core.listTokens(now);
  }

  /** The tenant is deleted: every record of its tokens leaves KV. */
  async removeTokens(tenantId: string): Promise<TokenEntry[]> {
    await this.tokensReady(tenantId);
    const removed = this.core.tokens.all();
    this.core.tokens.removeAll();
    await this.syncTokens();
    return removed;
  }

  tokenLimits(tokenId: string) {
    return this.core.tokenLimits(tokenId);
  }

  /**
   * A tenant just created: its record kept here from the start (tenant-record.ts, adopt),
   * and its platform key's cache version (admin/common.ts, welcomeTenant).
   */
  async welcome(created: StoredTenant, cacheVersion: string) {
    this.tenantRecord.adopt(created);
    await this.setCacheVersion(cacheVersion);
  }

  async setCacheVersion(version: string) {
    await this.tellBrokers(this.core.setCacheVersion(version));
  }

  cacheVersion() {
    return this.core.cacheVersion();
  }

  async setDisabled(disabled: boolean) {
    await this.tellBrokers(this.core.setDisabled(disabled));
  }

  /**
   * A change of the tenant's record (tenant-record.ts), made after every change before
   * it. Null when there is no such tenant.
   */
  updateTenant(tenantId: string, patch: TenantPatch): Promise<RecordChange | null> {
    return this.tenantRecord.update(tenantId, patch);
  }

  /**
   * What the guard holds beside the record follows it, in the change's turn: a status
   * sets the disabled flag (asked for again, it is set again), a new platform key takes
   * that key's cache version.
   */
  private async followRecord({ before, after }: RecordChange, asked: TenantPatch) {
    if (asked.status || after.status !== before.status) {
      await this.setDisabled(after.status === 'disabled');
    }
    if (after.key_fingerprint === before.key_fingerprint) return;
    const tenantId = after.id;
    const version = await versionForKey(
      this.tenantRecord.keys,
      tenantId,
      after.key_fingerprint,
      (other) => guardFor(this.env, other).cacheVersion(),
    );
    await this.setCacheVersion(version);
  }

  /**
   * Cache purge (docs/CACHE.md, "Cache versions and purging"): a new cache version for
   * every tenant sharing this tenant's platform key, the key taken from the record in
   * its turn, so a purge and a key change are ordered. The tenants given it (this one
   * first), or null when there is no such tenant.
   */
  purgeCache(tenantId: string): Promise<string[] | null> {
    return this.tenantRecord.withRecord(tenantId, async (record) => {
      if (!record) return null;
      const sharing = await this.tenantRecord.keys.tenantsSharing(record.key_fingerprint);
      const tenants = [...new Set([tenantId, ...sharing])];
      const version = newCacheVersion();
      await Promise.all(
        tenants.map((t) =>
          t === tenantId
            ? this.setCacheVersion(version)
            : guardFor(this.env, t).setCacheVersion(version),
        ),
      );
      return tenants;
    });
  }

  /** Re-seals the tenant's platform key under the ring's current key (key rotation). */
  resealTenantKey(tenantId: string): Promise<ResealOutcome> {
    return this.tenantRecord.reseal(tenantId);
  }

  /**
   * The tenant's record and index entries leave KV, refused first (again, in case an
   * enable came in since DELETE began); false when it was gone already.
   */
  removeTenant(tenantId: string): Promise<boolean> {
    return this.tenantRecord.remove(tenantId, () => this.setDisabled(true));
  }

  setAlerts(config: AlertConfig | null) {
    this.core.setAlerts(config);
  }

  alertSettings() {
    return this.core.alertSettings();
  }

  /** The webhook as stored, its secret sealed (for a sealed backup, and to keep the secret). */
  alertConfig() {
    return this.core.alertConfig();
  }

  /** One signed test delivery to the webhook, now; null when none is set. */
  async testAlert(): Promise<Delivery | null> {
    const config = this.core.alertConfig();
    if (!config) return null;
    const ring = await keyRing(this.env.KEY_ENCRYPTION_KEY ?? '');
    return sendTestAlert(config, ring, Date.now());
  }

  /** Idempotency keys of the tenant's writes (idempotency.ts). */
  claimIdempotency(req: ClaimRequest) {
    return this.core.claimIdempotency(req);
  }

  settleIdempotency(
    key: string,
    owner: KeyOwner,
    fingerprint: string,
    answer: StoredAnswer,
    now: number,
  ) {
    this.core.settleIdempotency(key, owner, fingerprint, answer, now);
  }

  releaseIdempotency(key: string, owner: KeyOwner, fingerprint: string) {
    this.core.releaseIdempotency(key, owner, fingerprint);
  }

  /**
   * The alarm: delivers quota alerts that are due, and sweeps rows that no longer
   * count (browser partitions and old slots pile up otherwise) and old history.
   */
  override async alarm(): Promise<void> {
    const now = Date.now();
    this.alarmAt = null;
    this.core.sweep(now);
    if (this.core.tokens.hasPending()) await this.syncTokens();
    await this.tenantRecord.finishHalfWritten().catch((err: unknown) => {
      // Its writes set the alarm again; the tenant's next change tries too.
      log.error('tenant_record.sync_failed', {
        error: err instanceof Error ? err.name : typeof err,
      });
    });
    const { nextAt } = await this.deliverAlerts(now);
    const fleetAt = await this.reportToFleet(now);
    this.scheduleAlarm(Math.min(nextAt ?? Number.POSITIVE_INFINITY, fleetAt, now + SWEEP_EVERY_MS));
  }

  /** Usage came in: the fleet board hears of it within FLEET_REPORT_MS (from the alarm). */
  private noteFleetUsage(): void {
    this.fleetDue = true;
    if (this.fleetScheduled) return;
    this.fleetScheduled = true;
    // A few seconds' wait lets the batches of a burst go in one report.
    const at = Math.max(Date.now() + FLEET_SETTLE_MS, this.fleetReportedAt + FLEET_REPORT_MS);
    this.scheduleAlarm(at);
  }

  /**
   * Reports the tenant's last two hours to its fleet board when usage came in and the
   * last report is FLEET_REPORT_MS old; when the next report may go (else infinity).
   */
  private async reportToFleet(now: number): Promise<number> {
    const tenantId = this.ctx.id.name;
    if (!this.fleetDue || !tenantId) return Number.POSITIVE_INFINITY;
    const next = this.fleetReportedAt + FLEET_REPORT_MS;
    this.fleetScheduled = true;
    if (now < next) return next;
    const hours = this.core.fleetHours(hourOf(now) - HOUR_MS);
    // Taken before the call: usage coming in while it is on its way is due again, not lost.
    this.fleetDue = false;
    try {
      if (hours.length > 0) await fleetBoardOf(this.env, tenantId).report(tenantId, hours, now);
      this.fleetReportedAt = now;
      // Usage came in meanwhile: the alarm stays set for its report (fleetScheduled too).
      if (this.fleetDue) return now + FLEET_REPORT_MS;
      this.fleetScheduled = false;
      return Number.POSITIVE_INFINITY;
    } catch {
      // Given back, and tried again with the next alarm.
      this.fleetDue = true;
      return now + FLEET_REPORT_MS;
    }
  }

  /**
   * Re-seals the webhook's signing secret under the ring's current key (key
   * rotation, POST /admin/maintenance/reencrypt); true when it did.
   */
  async resealAlertSecret(): Promise<boolean> {
    const config = this.core.alertConfig();
    const ring = await keyRing(this.env.KEY_ENCRYPTION_KEY ?? '');
    if (!config || (isSealed(config.secret) && sealedKid(config.secret) === ring.currentKid)) {
      return false;
    }
    const secret = isSealed(config.secret)
      ? await open(ring, config.secret, config.tenantId)
      : config.secret;
    this.core.setAlerts({ ...config, secret: await seal(ring, secret, config.tenantId) });
    return true;
  }

  /** Sends the quota alerts due at `now` (the alarm calls this; tests pass their own time). */
  async deliverAlerts(now: number): Promise<{ results: DeliveryResult[]; nextAt: number | null }> {
    const ring = await keyRing(this.env.KEY_ENCRYPTION_KEY ?? '');
    const delivered = await deliverDue(this.ctx.storage.sql, this.core.alertConfig(), ring, now);
    for (const r of delivered.results) {
      await auditLog(this.env).record({
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
   * Pushes an operator change to every regional broker holding a lease
   * (broker.ts), before the change is answered: each applies it (or, for new
   * limits, drops what it knew), so the change holds everywhere once isolates'
   * own leases (LEASE_MAX_MS) end.
   * A broker that cannot be reached holds its pool no longer than
   * BROKER_LEASE_MS (docs/LIMITS.md, "Hierarchical leases").
   */
  private async tellBrokers(change: BrokerPush): Promise<void> {
    const holders = this.core.leaseHolders(Date.now());
    const brokers = this.env.LEASE_BROKER;
    await Promise.allSettled(
      holders.map((name) => brokers.get(brokers.idFromName(name)).apply(change)),
    );
  }

  /**
   * Once per tenant: the tokens KV held before this guard decided them are taken in.
   * Every token call waits for that one read of KV, so no token decision is made
   * without them; other calls (admissions, usage) go on meanwhile. Nothing else
   * writes a tenant's token records, so KV cannot change between the read and its
   * adoption (one synchronous step). Calls share that one promise: a Durable Object's
   * requests share its I/O context, so workerd does not cancel it under another call.
   */
  private async tokensReady(tenantId: string): Promise<void> {
    if (this.core.tokensAdopted()) return;
    this.adopting ??= indexedTokens(this.env.TENANTS, tenantId)
      .then((entries) => {
        if (!this.core.tokensAdopted()) this.core.adoptTokens(entries);
      })
      .finally(() => {
        this.adopting = null;
      });
    await this.adopting;
    // What the guard knew better (a revocation KV had lost) goes back to KV.
    await this.syncTokens();
  }

  /**
   * Writes what was decided and KV lacks, and the audit entries not yet sent, one
   * writer at a time: each write is the token's latest decided record, so whatever
   * the order calls finish in, KV ends with the last decision. A call waits for a
   * write in progress (polling: it never awaits another call's I/O), then writes
   * what is still missing. What cannot be written now is left to the alarm.
   */
  private async syncTokens(): Promise<void> {
    // Each round writes what was pending when it began; decisions made meanwhile (by
    // other calls, which wait here) are written by the next round.
    for (let round = 0; round < SYNC_ROUNDS; round++) {
      if (this.syncing) {
        await waitUntilDone(() => !this.syncing, 30_000);
        continue;
      }
      if (!this.core.tokens.hasPending()) return;
      // Should this object end before the writes do, its alarm finishes them.
      this.scheduleAlarm(Date.now() + RESYNC_AFTER_MS);
      this.syncing = true;
      try {
        for (const write of this.core.tokens.pendingWrites()) {
          await retriedOnce(() =>
            write.removed
              ? eraseTokenRecord(this.env.TENANTS, write)
              : writeTokenRecord(this.env.TENANTS, write),
          );
          this.core.tokens.written(write.record.id, write.version);
        }
        for (const { seq, entry } of this.core.tokens.pendingAudits()) {
          log.info(`audit.${entry.action}`, entry);
          await retriedOnce(() => auditLog(this.env).record(entry));
          this.core.tokens.audited(seq);
        }
      } catch (err) {
        // The alarm set above tries again.
        log.error('tokens.sync_failed', { error: err instanceof Error ? err.name : typeof err });
        return;
      } finally {
        this.syncing = false;
      }
    }
    // Decided, answered, not yet in KV: the alarm set above writes the rest.
    if (this.core.tokens.hasPending()) {
      log.warn('tokens.sync_deferred', { rounds: SYNC_ROUNDS, retry_in_ms: RESYNC_AFTER_MS });
    }
  }

  /** Makes sure the alarm fires by `at` (real clock). */
  private scheduleAlarm(at: number): void {
    const wanted = Math.max(at, Date.now());
    if (this.alarmAt !== undefined && this.alarmAt !== null && this.alarmAt <= wanted) return;
    this.alarmAt = wanted;
    void this.ctx.storage
      .getAlarm()
      .then((current) =>
        current === null || current > wanted ? this.ctx.storage.setAlarm(wanted) : undefined,
      )
      .catch(() => {
        this.alarmAt = undefined;
      });
  }
}

async function retriedOnce(write: () => Promise<void>): Promise<void> {
  try {
    await write();
  } catch {
    await new Promise((resolve) => setTimeout(resolve, KV_RETRY_MS));
    await write();
  }
}
