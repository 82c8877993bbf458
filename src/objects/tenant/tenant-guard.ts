/**
 * src/objects/tenant/ is the TenantGuard Durable Object, one per tenant:
 * - TenantGuard (this file): the single writer of its counters, leases, tokens,
 *   cache version and settings, and of the tenant's KV record (tenant-record.ts).
 *   The work is core.ts; this shell adds what needs the runtime: the alarm, alert
 *   deliveries (fetch, audit log), the key ring, and writing the tokens it
 *   decided to KV (token-changes.ts, token-registry.ts);
 * - its storage: store.ts (settings, token states), ledger.ts and slots.ts
 *   (units counted per meter and window), history.ts (usage history),
 *   alerts.ts (quota alerts, sent from its alarm), idempotency.ts (the
 *   answers of writes sent with an Idempotency-Key), kept-record.ts (the
 *   tenant's record as decided here), all over sql.ts.
 * The regional lease brokers between isolates and the guard are src/objects/broker/;
 * the terms isolates and the guard share (policies and meters, the lease
 * protocol, lease windows, usage rows) are src/metering/, below both; the
 * isolate's side, which calls the guard, is src/limits/; nothing here imports
 * it (docs/ARCHITECTURE.md).
 */
import { DurableObject } from 'cloudflare:workers';
import { log } from '../../log';
import type { LeaseRequest, Returned } from '../../metering/lease-protocol';
import type { Limits } from '../../metering/policy';
import type { UsageBatch } from '../../metering/usage';
import { keyRing } from '../../tenants/crypto';
import type { TenantPatch } from '../../tenants/tenant-store';
import { eraseTokenRecord, indexedTokens, writeTokenRecord } from '../../tenants/token-store';
import type { StoredTenant } from '../../types/tenants';
import { auditLog } from '../audit/audit-log';
import { fleetBoardOf } from '../fleet/fleet-board';
import type { AlertsHandle } from './alerts/alerts-part';
import { newCacheVersion, versionForKey } from './cache-version';
import { GuardCore } from './core';
import type { HistoryHandle } from './history/history-part';
import type { HistoryQuery } from './history/rollups';
import type { IdempotencyHandle } from './idempotency/idempotency-part';
import { SWEEP_EVERY_MS } from './part';
import type { PlanPush } from './plan-protocol';
import type { RecentRequestsHandle } from './recent/recent-requests-part';
import { type RecordChange, type ResealOutcome, TenantRecord } from './tenant-record';
import type { TokensHandle } from './tokens/tokens-part';

/** A record change KV has not taken yet is tried again by the alarm this soon. */
const RESYNC_AFTER_MS = 5000;

/** The TenantGuard of one tenant, as a stub (tests, and what needs the object itself). */
export function guardStub(
  env: { TENANT_GUARD: DurableObjectNamespace<TenantGuard> },
  tenantId: string,
): DurableObjectStub<TenantGuard> {
  return env.TENANT_GUARD.get(env.TENANT_GUARD.idFromName(tenantId));
}

/** The guard's methods that hand out a part (part.ts). */
const PARTS = ['recentRequests', 'history', 'idempotency', 'alerts', 'tokens'] as const;
/** The calls the guard still answers itself, until their part takes them. */
const CALLS = [
  'acquire',
  'record',
  'ownView',
  'usage',
  'setLimits',
  'applyPlan',
  'welcome',
  'setCacheVersion',
  'cacheVersion',
  'setDisabled',
  'updateTenant',
  'purgeCache',
  'resealTenantKey',
  'removeTenant',
] as const;

/** One tenant's TenantGuard as callers reach it: its parts, each in one round trip. */
export type GuardParts = Pick<
  DurableObjectStub<TenantGuard>,
  (typeof PARTS)[number] | (typeof CALLS)[number]
>;

/**
 * The TenantGuard of one tenant, by its parts: `guardFor(env, id).history().query(q)` is
 * one round trip, the call pipelined on the part's stub before it has come back. A
 * guard that cannot be reached fails that call, where the caller handles it; the part's
 * own promise fails alike and is marked handled here, so no failure goes unhandled.
 */
export function guardFor(
  env: { TENANT_GUARD: DurableObjectNamespace<TenantGuard> },
  tenantId: string,
): GuardParts {
  const stub = guardStub(env, tenantId);
  const methods = stub as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const parts: Record<string, (...args: unknown[]) => unknown> = {};
  for (const name of PARTS) {
    parts[name] = () => {
      const part = methods[name]?.();
      part?.catch(() => undefined);
      return part;
    };
  }
  for (const name of CALLS) parts[name] = (...args) => methods[name]?.(...args);
  return parts as unknown as GuardParts;
}

export class TenantGuard extends DurableObject {
  private readonly core: GuardCore;
  /** The tenant's KV record, changed one call at a time (tenant-record.ts). */
  private readonly tenantRecord: TenantRecord;
  /** When the alarm is set for, as far as this object knows (undefined: not known). */
  private alarmAt: number | null | undefined;

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    // Its name is its tenant's id (guardFor): alerts and fleet reports name the tenant.
    this.core = new GuardCore(ctx.storage.sql, {
      tenantId: ctx.id.name ?? null,
      now: () => Date.now(),
      wakeBy: (at) => this.scheduleAlarm(at),
      reportToFleet: (tenantId, hours, now) =>
        fleetBoardOf(this.env, tenantId).report(tenantId, hours, now),
      keyRing: () => keyRing(this.env.KEY_ENCRYPTION_KEY ?? ''),
      audit: (entry) => auditLog(this.env).record(entry),
      tokenRecords: {
        stored: (tenantId) => indexedTokens(this.env.TENANTS, tenantId),
        write: (entry) => writeTokenRecord(this.env.TENANTS, entry),
        erase: (entry) => eraseTokenRecord(this.env.TENANTS, entry),
      },
      sendToBroker: (name, push) =>
        this.env.LEASE_BROKER.get(this.env.LEASE_BROKER.idFromName(name)).apply(push),
    });
    this.tenantRecord = new TenantRecord(env, ctx.storage.sql, {
      follow: (change, asked) => this.followRecord(change, asked),
      retryLater: () => this.scheduleAlarm(Date.now() + RESYNC_AFTER_MS),
    });
  }

  /** The one call lease holders make (core.ts). */
  acquire(req: LeaseRequest) {
    return this.core.acquire(req);
  }

  record(batch: UsageBatch, retentionDays?: number, returns?: Returned[]) {
    this.core.record(batch, retentionDays, returns);
  }

  /** The tenant's recent requests (recent/recent-requests.ts). */
  recentRequests(): RecentRequestsHandle {
    return this.core.recent;
  }

  /** The tenant's alerts (alerts/alerts-part.ts). */
  alerts(): AlertsHandle {
    return this.core.alerts;
  }

  /** The tenant's usage history (history/history-part.ts). */
  history(): HistoryHandle {
    return this.core.history;
  }

  /**
   * A token's own view in one call: the meters now (the token's own too), and for each
   * range its history and its refusals by operation.
   */
  ownView(now: number, defaults: Limits, tokenId: string, queries: HistoryQuery[]) {
    return {
      usage: this.core.usage(now, defaults, tokenId),
      history: queries.map((q) => ({
        ...this.core.history.query(q),
        byOperation: this.core.history.refusalsByOperation(q.from, q.to),
      })),
    };
  }

  usage(now: number, defaults: Limits, tokenId?: string) {
    return this.core.usage(now, defaults, tokenId);
  }

  /** The tenant's own limits (null: its plan's, or the defaults); the limits now in force. */
  async setLimits(limits: Limits | null, defaults: Limits): Promise<Limits> {
    this.core.setLimits(limits);
    await this.core.tellBrokers({ kind: 'reset' });
    return this.core.limitsInForce(defaults);
  }

  /** The PlanBook's decision about this tenant's plan (plan-protocol.ts). */
  async applyPlan(push: PlanPush): Promise<void> {
    if (this.core.applyPlan(push)) await this.core.tellBrokers({ kind: 'reset' });
  }

  /** The tenant's tokens (tokens/tokens-part.ts). */
  tokens(): TokensHandle {
    return this.core.tokens;
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
    await this.core.tellBrokers(this.core.setCacheVersion(version));
  }

  cacheVersion() {
    return this.core.cacheVersion();
  }

  async setDisabled(disabled: boolean) {
    await this.core.tellBrokers(this.core.setDisabled(disabled));
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

  /** Idempotency keys of the tenant's writes (idempotency/idempotency-part.ts). */
  idempotency(): IdempotencyHandle {
    return this.core.idempotency;
  }

  /**
   * The alarm: delivers quota alerts that are due, and sweeps rows that no longer
   * count (browser partitions and old slots pile up otherwise) and old history.
   */
  override async alarm(): Promise<void> {
    const now = Date.now();
    this.alarmAt = null;
    this.core.sweep(now);
    await this.core.tokens.catchUp();
    await this.tenantRecord.finishHalfWritten().catch((err: unknown) => {
      // Its writes set the alarm again; the tenant's next change tries too.
      log.error('tenant_record.sync_failed', {
        error: err instanceof Error ? err.name : typeof err,
      });
    });
    const nextAt = await this.core.alerts.catchUp(now);
    const fleetAt = await this.core.history.catchUp(now);
    this.scheduleAlarm(Math.min(nextAt, fleetAt, now + SWEEP_EVERY_MS));
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
