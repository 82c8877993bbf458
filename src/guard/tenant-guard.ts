/**
 * src/guard/ is the code Durable Objects run:
 * - TenantGuard (this file): one SQLite-backed Durable Object per tenant, the
 *   single writer of its counters, leases, tokens, cache version and
 *   settings. The work is core.ts; this shell adds what needs the runtime:
 *   the alarm, alert deliveries (fetch, audit log), the key ring, and writing
 *   the tokens it decided to KV (token-changes.ts, token-registry.ts);
 * - its storage: store.ts (settings, token states), ledger.ts and slots.ts
 *   (units counted per meter and window), history.ts (usage history),
 *   alerts.ts (quota alerts, sent from its alarm), idempotency.ts (the
 *   answers of writes sent with an Idempotency-Key), all over sql.ts;
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
import type { UsageBatch } from '../metering/usage';
import { isSealed, keyRing, open, seal, sealedKid } from '../tenants/crypto';
import {
  eraseTokenRecord,
  indexedTokens,
  type TokenEntry,
  writeTokenRecord,
} from '../tenants/token-store';
import { waitUntilDone } from '../waiters';
import { type AlertConfig, type DeliveryResult, deliverDue, sendTestAlert } from './alerts';
import { GuardCore, SWEEP_EVERY_MS } from './core';
import type { HistoryQuery } from './history';
import type { ClaimRequest, KeyOwner, StoredAnswer } from './idempotency';
import type { RevokeOutcome, TokenSpecOf } from './token-changes';
import type { AuditContext, MintedToken, RotateOutcome } from './token-registry';

/** A decision KV has not taken yet is tried again by the alarm this soon. */
const RESYNC_AFTER_MS = 5000;
/** A write to KV that failed is tried once more, after this pause (KV takes one write a second per key). */
const KV_RETRY_MS = 1100;
/** Rounds of writing one call makes at most before it answers; the alarm writes the rest. */
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
  /** When the alarm is set for, as far as this object knows (undefined: not known). */
  private alarmAt: number | null | undefined;
  /** A call is writing decided token records to KV (syncTokens). */
  private syncing = false;

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    this.core = new GuardCore(ctx.storage.sql, (at) => this.scheduleAlarm(at));
  }

  /** The one call lease holders make (core.ts). */
  acquire(req: LeaseRequest) {
    return this.core.acquire(req);
  }

  record(batch: UsageBatch, retentionDays?: number, returns?: Returned[]) {
    this.core.record(batch, retentionDays, returns);
  }

  history(q: HistoryQuery) {
    return this.core.history(q);
  }

  usage(now: number, defaults: Limits, tokenId?: string) {
    return this.core.usage(now, defaults, tokenId);
  }

  async setLimits(limits: Limits | null) {
    this.core.setLimits(limits);
    await this.tellBrokers({ kind: 'reset' });
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

  async listTokens(tenantId: string, now: number) {
    await this.tokensReady(tenantId);
    return this.core.tokenChanges.list(now);
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

  async setCacheVersion(version: string) {
    await this.tellBrokers(this.core.setCacheVersion(version));
  }

  cacheVersion() {
    return this.core.cacheVersion();
  }

  async setDisabled(disabled: boolean) {
    await this.tellBrokers(this.core.setDisabled(disabled));
  }

  setAlerts(config: AlertConfig | null) {
    this.core.setAlerts(config);
  }

  alertSettings() {
    return this.core.alertSettings();
  }

  /** One signed test delivery to the webhook, now: its HTTP status (null: none set or unreached). */
  async testAlert(): Promise<{ configured: boolean; status: number | null }> {
    const config = this.core.alertConfig();
    if (!config) return { configured: false, status: null };
    const ring = await keyRing(this.env.KEY_ENCRYPTION_KEY ?? '');
    return { configured: true, status: await sendTestAlert(config, ring, Date.now()) };
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
    const { nextAt } = await this.deliverAlerts(now);
    this.scheduleAlarm(Math.min(nextAt ?? Number.POSITIVE_INFINITY, now + SWEEP_EVERY_MS));
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
        detail: {
          policy: r.payload.policy,
          threshold: r.payload.threshold,
          attempts: r.attempts,
          status: r.status,
        },
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
   * Once per tenant: the tokens KV held before this guard decided them are taken in
   * (blocking other calls meanwhile, so no decision is made without them).
   */
  private async tokensReady(tenantId: string): Promise<void> {
    if (this.core.tokensAdopted()) return;
    await this.ctx.blockConcurrencyWhile(async () => {
      if (this.core.tokensAdopted()) return;
      this.core.adoptTokens(await indexedTokens(this.env.TENANTS, tenantId));
    });
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
