/**
 * The TenantGuard Durable Object, one per tenant (docs/ARCHITECTURE.md, "The tenant's
 * guard, in parts"): its parts (parts.ts) each own their tables and invariants, and
 * this shell only routes. Its one method, `call`, makes a call of one part, by name,
 * as `guardFor` asks (one round trip); its alarm runs the parts' chores; and
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
import { ALERTS_CALLS } from './alerts/alerts-part';
import { EXPORT_CALLS } from './export/export-part';
import { GRANTS_CALLS } from './grants/grants-part';
import { HISTORY_CALLS } from './history/history-part';
import { IDEMPOTENCY_CALLS } from './idempotency/idempotency-part';
import type { TenantIo } from './io';
import { LIMITS_CALLS } from './limits/limits-part';
import { TenantParts } from './parts';
import { RECENT_REQUESTS_CALLS } from './recent/recent-requests-part';
import { TENANT_RECORD_CALLS } from './record/tenant-record-part';
import { TOKENS_CALLS } from './tokens/tokens-part';

/** The TenantGuard of one tenant, as a stub (tests, and what needs the object itself). */
export function guardStub(
  env: { TENANT_GUARD: DurableObjectNamespace<TenantGuard> },
  tenantId: string,
): DurableObjectStub<TenantGuard> {
  return env.TENANT_GUARD.get(env.TENANT_GUARD.idFromName(tenantId));
}

/** What callers reach of each part: its name in the guard (parts.ts), and its calls. */
const PARTS = {
  limits: LIMITS_CALLS,
  tokens: TOKENS_CALLS,
  tenantRecord: TENANT_RECORD_CALLS,
  idempotency: IDEMPOTENCY_CALLS,
  recentRequests: RECENT_REQUESTS_CALLS,
  history: HISTORY_CALLS,
  alerts: ALERTS_CALLS,
  grants: GRANTS_CALLS,
  export: EXPORT_CALLS,
} as const satisfies { [P in keyof TenantParts]?: readonly (keyof TenantParts[P])[] };

type PartName = keyof typeof PARTS;
/** A part's calls as a caller makes them: each answers a promise (over RPC). */
type Calls<P> = {
  [K in keyof P]: P[K] extends (...args: infer A) => infer R
    ? (...args: A) => Promise<Awaited<R>>
    : never;
};

/** One tenant's TenantGuard as callers reach it: its parts' calls, each one round trip. */
export type GuardParts = {
  [P in PartName]: () => Calls<
    Pick<TenantParts[P], (typeof PARTS)[P][number] & keyof TenantParts[P]>
  >;
};

/**
 * The TenantGuard of one tenant, by its parts: `guardFor(env, id).history().query(q)`
 * is one call of the guard (`call`), which routes it to the part: one round trip.
 */
export function guardFor(
  env: { TENANT_GUARD: DurableObjectNamespace<TenantGuard> },
  tenantId: string,
): GuardParts {
  const stub = guardStub(env, tenantId);
  const guard: Record<string, unknown> = {};
  for (const [part, calls] of Object.entries(PARTS) as [PartName, readonly string[]][]) {
    guard[part] = () =>
      Object.fromEntries(
        calls.map((call) => [call, (...args: unknown[]) => stub.call(part, call, args)]),
      );
  }
  return guard as GuardParts;
}

export class TenantGuard extends DurableObject {
  private readonly parts: TenantParts;
  private readonly clock: AlarmClock;

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    this.clock = new AlarmClock(ctx.storage);
    this.parts = new TenantParts(ctx.storage.sql, runtimeIo(ctx, env, this.clock));
  }

  /**
   * The one way in: a call of one of the tenant's parts, by name, as `guardFor` makes it.
   * Only the calls a part lists are made; anything else is refused.
   */
  call(part: PartName, call: string, args: unknown[]): unknown {
    const calls: readonly string[] = Object.hasOwn(PARTS, part) ? PARTS[part] : [];
    const refused = () => new TypeError(`TenantGuard has no call ${part}.${call}`);
    if (!calls.includes(call)) throw refused();
    const target: object = this.parts[part];
    const method: unknown = Reflect.get(target, call);
    if (typeof method !== 'function') throw refused();
    return Reflect.apply(method, target, args);
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
    produceUsage: async (aggregates) => {
      const queue = (env as { USAGE_EVENTS?: Queue }).USAGE_EVENTS;
      if (!queue) throw new Error('no USAGE_EVENTS queue');
      for (let i = 0; i < aggregates.length; i += 100) {
        const chunk = aggregates.slice(i, i + 100);
        await queue.sendBatch(chunk.map((body) => ({ body, contentType: 'json' as const })));
      }
    },
  };
}
