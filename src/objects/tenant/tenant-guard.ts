/**
 * The TenantGuard Durable Object, one per tenant (docs/ARCHITECTURE.md, "The tenant's
 * guard, in parts"): its parts (parts.ts) each own their tables and invariants, and
 * this shell only routes. Each of its methods hands a caller one part, which
 * `guardFor` reaches in one round trip; its alarm runs the parts' chores; and
 * `runtimeIo` is what the parts reach beyond their SQLite in the runtime: KV, the
 * audit log, the fleet board, the brokers, other tenants' guards, the key ring.
 * One object per tenant runs one call at a time, and each part decides in one
 * synchronous step: that order is what makes exact limits and revoke-beats-rotate.
 * The regional lease brokers between isolates and the guard are src/objects/broker/;
 * the terms isolates and the guard share are src/metering/, below both; the isolate's
 * side, which calls the guard, is src/limits/ (docs/ARCHITECTURE.md).
 */
import { DurableObject } from 'cloudflare:workers';
import { keyRing } from '../../tenants/crypto';
import { eraseTokenRecord, indexedTokens, writeTokenRecord } from '../../tenants/token-store';
import { auditLog } from '../audit/audit-log';
import { fleetBoardOf } from '../fleet/fleet-board';
import { AlarmClock } from './alarm-clock';
import { ALERTS_CALLS, type AlertsHandle } from './alerts/alerts-part';
import { HISTORY_CALLS, type HistoryHandle } from './history/history-part';
import { IDEMPOTENCY_CALLS, type IdempotencyHandle } from './idempotency/idempotency-part';
import type { TenantIo } from './io';
import { LIMITS_CALLS, type LimitsHandle } from './limits/limits-part';
import { TenantParts } from './parts';
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
  limits: LIMITS_CALLS,
  recentRequests: RECENT_REQUESTS_CALLS,
  history: HISTORY_CALLS,
  idempotency: IDEMPOTENCY_CALLS,
  alerts: ALERTS_CALLS,
  tokens: TOKENS_CALLS,
  tenantRecord: TENANT_RECORD_CALLS,
} as const;

type PartName = keyof typeof PARTS;
/** A part's calls as a caller makes them: each answers a promise (over RPC). */
type Calls<H> = {
  [K in Exclude<keyof H, symbol>]: H[K] extends (...args: infer A) => infer R
    ? (...args: A) => Promise<Awaited<R>>
    : never;
};

/** One tenant's TenantGuard as callers reach it: its parts' calls, each one round trip. */
export type GuardParts = { [P in PartName]: () => Calls<ReturnType<TenantGuard[P]>> };

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
  private readonly parts: TenantParts;
  private readonly clock: AlarmClock;

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    this.clock = new AlarmClock(ctx.storage);
    this.parts = new TenantParts(ctx.storage.sql, runtimeIo(ctx, env, this.clock));
  }

  /** Counting, leases and the tenant's limits (limits/limits-part.ts). */
  limits(): LimitsHandle {
    return this.parts.limits;
  }

  /** The tenant's tokens (tokens/tokens-part.ts). */
  tokens(): TokensHandle {
    return this.parts.tokens;
  }

  /** The tenant's KV record, its disabled flag and cache version (record/tenant-record-part.ts). */
  tenantRecord(): TenantRecordHandle {
    return this.parts.tenantRecord;
  }

  /** Idempotency keys of the tenant's writes (idempotency/idempotency-part.ts). */
  idempotency(): IdempotencyHandle {
    return this.parts.idempotency;
  }

  /** The tenant's recent requests (recent/recent-requests-part.ts). */
  recentRequests(): RecentRequestsHandle {
    return this.parts.recentRequests;
  }

  /** The tenant's usage history (history/history-part.ts). */
  history(): HistoryHandle {
    return this.parts.history;
  }

  /** The tenant's alerts (alerts/alerts-part.ts). */
  alerts(): AlertsHandle {
    return this.parts.alerts;
  }

  override async alarm(): Promise<void> {
    const now = Date.now();
    this.clock.rang();
    this.clock.wakeBy(await this.parts.alarm(now));
  }
}

/** What the parts reach beyond their SQLite, in the runtime (io.ts). */
function runtimeIo(ctx: DurableObjectState, env: Cloudflare.Env, clock: AlarmClock): TenantIo {
  return {
    // Its name is its tenant's id (guardFor): alerts and fleet reports name the tenant.
    tenantId: ctx.id.name ?? null,
    now: () => Date.now(),
    wakeBy: (at) => clock.wakeBy(at),
    reportToFleet: (tenantId, hours, now) =>
      fleetBoardOf(env, tenantId).report(tenantId, hours, now),
    keyRing: () => keyRing(env.KEY_ENCRYPTION_KEY ?? ''),
    audit: (entry) => auditLog(env).record(entry),
    tokenRecords: {
      stored: (tenantId) => indexedTokens(env.TENANTS, tenantId),
      write: (entry) => writeTokenRecord(env.TENANTS, entry),
      erase: (entry) => eraseTokenRecord(env.TENANTS, entry),
    },
    sendToBroker: (name, push) =>
      env.LEASE_BROKER.get(env.LEASE_BROKER.idFromName(name)).apply(push),
    kv: env,
    otherGuard: (tenantId) => guardFor(env, tenantId).tenantRecord(),
  };
}
