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
import type { LeaseRequest, Returned } from '../../metering/lease-protocol';
import type { Limits } from '../../metering/policy';
import type { UsageBatch } from '../../metering/usage';
import { keyRing } from '../../tenants/crypto';
import { eraseTokenRecord, indexedTokens, writeTokenRecord } from '../../tenants/token-store';
import { auditLog } from '../audit/audit-log';
import { fleetBoardOf } from '../fleet/fleet-board';
import { ALERTS_CALLS, type AlertsHandle } from './alerts/alerts-part';
import { GuardCore } from './core';
import { HISTORY_CALLS, type HistoryHandle } from './history/history-part';
import type { HistoryQuery } from './history/rollups';
import { IDEMPOTENCY_CALLS, type IdempotencyHandle } from './idempotency/idempotency-part';
import { SWEEP_EVERY_MS } from './part';
import type { PlanPush } from './plan-protocol';
import { RECENT_REQUESTS_CALLS, type RecentRequestsHandle } from './recent/recent-requests-part';
import { TENANT_RECORD_CALLS, type TenantRecordHandle } from './record/tenant-record-part';
import { TOKENS_CALLS, type TokensHandle } from './tokens/tokens-part';

/** The TenantGuard of one tenant, as a stub (tests, and what needs the object itself). */
export function guardStub(
  env: { TENANT_GUARD: DurableObjectNamespace<TenantGuard> },
  tenantId: string,
): DurableObjectStub<TenantGuard> {
  return env.TENANT_GUARD.get(env.TENANT_GUARD.idFromName(tenantId));
}

/** What callers reach of each part: the guard's method that hands it out, and its calls. */
const PARTS = {
  recentRequests: RECENT_REQUESTS_CALLS,
  history: HISTORY_CALLS,
  idempotency: IDEMPOTENCY_CALLS,
  alerts: ALERTS_CALLS,
  tokens: TOKENS_CALLS,
  tenantRecord: TENANT_RECORD_CALLS,
} as const;
/** The calls the guard still answers itself, until their part takes them. */
const CALLS = ['acquire', 'record', 'ownView', 'usage', 'setLimits', 'applyPlan'] as const;

type PartName = keyof typeof PARTS;
/** A part's calls as a caller makes them: each answers a promise (over RPC). */
type Calls<H> = {
  [K in Exclude<keyof H, symbol>]: H[K] extends (...args: infer A) => infer R
    ? (...args: A) => Promise<Awaited<R>>
    : never;
};

/** One tenant's TenantGuard as callers reach it: its parts' calls, each one round trip. */
export type GuardParts = { [P in PartName]: () => Calls<ReturnType<TenantGuard[P]>> } & Pick<
  DurableObjectStub<TenantGuard>,
  (typeof CALLS)[number]
>;

/**
 * The TenantGuard of one tenant, by its parts: `guardFor(env, id).history().query(q)`.
 * Each call goes in one round trip, pipelined on a stub of the part before that stub has
 * come back, and the stub is let go once the call is answered: a stub kept would keep
 * the guard's request open, and the object in memory, until the caller's own request
 * ends (for a Durable Object calling, until it is evicted). A guard that cannot be
 * reached fails the call, where the caller handles it; the part's stub fails alike and
 * is marked handled, so no failure goes unhandled.
 */
export function guardFor(
  env: { TENANT_GUARD: DurableObjectNamespace<TenantGuard> },
  tenantId: string,
): GuardParts {
  const stub = guardStub(env, tenantId) as unknown as Record<
    string,
    (...args: unknown[]) => unknown
  >;
  const guard: Record<string, unknown> = {};
  for (const [name, calls] of Object.entries(PARTS)) {
    const open = () => stub[name]?.() as PartStub;
    guard[name] = () =>
      Object.fromEntries(
        calls.map((call) => [call, (...args: unknown[]) => oneCall(open, call, args)]),
      );
  }
  for (const name of CALLS) guard[name] = (...args: unknown[]) => stub[name]?.(...args);
  return guard as unknown as GuardParts;
}

/** A part's stub as a call on it is made: pipelined calls, a failure, a disposer. */
type PartStub = Record<string, (...args: unknown[]) => Promise<unknown>> &
  Promise<unknown> &
  Disposable;

async function oneCall(open: () => PartStub, call: string, args: unknown[]): Promise<unknown> {
  const part = open();
  part.catch(() => undefined);
  try {
    return await part[call]?.(...args);
  } finally {
    part[Symbol.dispose]();
  }
}

export class TenantGuard extends DurableObject {
  private readonly core: GuardCore;
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
      kv: env,
      otherGuard: (tenantId) => guardFor(this.env, tenantId).tenantRecord(),
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

  /** The tenant's KV record, its disabled flag and cache version (record/tenant-record-part.ts). */
  tenantRecord(): TenantRecordHandle {
    return this.core.tenantRecord;
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
    await this.core.tenantRecord.catchUp();
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
