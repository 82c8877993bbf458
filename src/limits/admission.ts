/**
 * src/limits/ is the code an isolate runs for rate limits and quotas: a
 * request is admitted from this isolate's lease of its tenant's budget
 * (lease.ts) or by one call to the tenant's TenantGuard, through its region's
 * broker (region.ts) or directly (src/objects/, which this side calls and which
 * never call back), answered with RateLimit fields (headers.ts); the usage it
 * gathers (usage-buffer.ts) rides along with those calls. What both sides say
 * is src/metering/. request.ts is how a request uses all this.
 *
 * Admission in one isolate (this file): from the tenant's lease when it can,
 * else one call to the TenantGuard at a time per tenant, which the other
 * requests of that tenant wait for (lease.ts, waiters.ts). Exact-mode
 * tenants make one call per request. Renewals run in the background before a
 * lease ends. One Admission per isolate (`isolateAdmission`); the fleet
 * simulation makes one per simulated isolate.
 */

import type { LeaseAnswer, LeaseRequest, Refusal, Returned } from '../metering/lease-protocol';
import type { Scope } from '../metering/policy';
import type { UsageBatch } from '../metering/usage';
import { count } from '../stats';
import { waitUntilDone } from '../waiters';
import type { Decision, LeaseSettings } from './lease';
import { TenantLease } from './lease';
import { USAGE_FLUSH_MS, UsageBuffer, type UsageEntry } from './usage-buffer';

/**
 * What hosts an admission (`host` below): a request (limits/request.ts) or the
 * fleet simulation; how it reaches the tenant's guard, and its clock.
 */
export interface AdmissionIo {
  /** Calls the tenant's TenantGuard. */
  acquire(req: LeaseRequest): Promise<LeaseAnswer>;
  /**
   * Hands the TenantGuard a usage batch on its own (when no lease call came by in
   * time), with the unused units of ended leases: a broker's lease too, since the
   * guard counted those units when the broker pooled them, and the broker gives
   * back only what it still holds.
   */
  record(batch: UsageBatch, retentionDays: number, returns?: Returned[]): Promise<void>;
  /** Resolves after `ms` (a request's timer); absent, usage waits for the next request. */
  later?(ms: number): Promise<void>;
  /** Keeps background work (and a call others wait on) alive past the response. */
  waitUntil(promise: Promise<unknown>): void;
  now(): number;
  /** Waits until `done()` holds, at most `timeoutMs` (default: waiters.ts; the simulation's clock). */
  waitFor?(done: () => boolean, timeoutMs: number): Promise<boolean>;
}

/** The guard could not be reached, now or within the last second. */
export const UNAVAILABLE = { kind: 'unavailable' } as const;
export type AdmissionResult = Decision | typeof UNAVAILABLE;

/** Most tenants one isolate keeps a lease for (docs/BOUNDS.md). */
const MAX_TENANTS = 10_000;
/** After a failed call, requests fail at once for this long instead of each trying again. */
const DOWN_FOR_MS = 1000;
/** A waiter gives up on another request's call after this long, and asks itself. */
const WAIT_AT_MOST_MS = 5000;
/** Bound on rounds of waiting for other requests' calls. */
const MAX_ROUNDS = 20;

class TenantAdmission {
  readonly lease = new TenantLease();
  /** Usage gathered here, handed to the guard with the next call. */
  readonly usage = new UsageBuffer();
  /** A call to the guard is in flight. */
  calling = false;
  /** Units of requests waiting for that call. */
  queued = 0;
  downUntil = 0;
  /** A usage timer is set (recordUsage): one per tenant at a time. */
  flushSet = false;
}

/** One isolate's admission state: a lease and a usage buffer per tenant it has seen lately. */
export class Admission {
  private readonly tenants = new Map<string, TenantAdmission>();

  /** Admits or refuses one request of `scope` costing `cost` units. */
  async admit(
    tenantId: string,
    scope: Scope,
    cost: number,
    settings: LeaseSettings,
    host: AdmissionIo,
  ): Promise<AdmissionResult> {
    const tenant = this.tenant(tenantId);
    for (let round = 0; ; round++) {
      const now = host.now();
      const local = tenant.lease.admit(scope, cost, now);
      if (local.kind !== 'ask') {
        if (local.kind === 'refused') count('limit_refusals');
        renewInBackground(tenant, settings, host);
        return local;
      }
      if (now < tenant.downUntil) return UNAVAILABLE;
      // Exact tenants: every request is its own call, none waits for another's.
      const exact = tenant.lease.mode === 'exact';
      if (!exact && tenant.calling && round < MAX_ROUNDS) {
        tenant.queued += cost;
        await (host.waitFor ?? waitUntilDone)(() => !tenant.calling, WAIT_AT_MOST_MS);
        tenant.queued = Math.max(0, tenant.queued - cost);
        continue;
      }
      return call(tenant, settings, host, { scope, cost, queued: exact ? 0 : tenant.queued });
    }
  }

  /**
   * Whether a scope's token and tenant still stand (open streams ask this every
   * lease time): from the lease, or from one guard call when it cannot say.
   * Counts nothing.
   */
  async standing(
    tenantId: string,
    scope: Scope,
    settings: LeaseSettings,
    host: AdmissionIo,
  ): Promise<Refusal | null | typeof UNAVAILABLE> {
    const tenant = this.tenant(tenantId);
    const known = tenant.lease.standing(scope, host.now());
    if (known !== 'ask') return known;
    try {
      const req = tenant.lease.request(host.now(), settings, { scope, cost: 0, queued: 0 });
      const answer = await keptAlive(host, host.acquire(req));
      tenant.lease.apply(req, answer, host.now());
    } catch {
      return UNAVAILABLE;
    }
    const after = tenant.lease.standing(scope, host.now(), true);
    return after === 'ask' ? UNAVAILABLE : after;
  }

  /** Drops this isolate's leases of a tenant: its next request asks the guard (operator changes). */
  forget(tenantId: string): void {
    this.tenants.get(tenantId)?.lease.forget();
    this.tenants.get(selfServiceLane(tenantId))?.lease.forget();
  }

  /**
   * Adds a finished request to its tenant's usage. The batch rides with the next
   * lease call; it is sent on its own, off the request path, once it is
   * USAGE_FLUSH_MS old when a later request finishes, and in any case by the
   * tenant's timer, set by the first entry after the last one fired, so a quiet
   * tenant's last requests arrive within USAGE_FLUSH_MS too
   * (docs/OBSERVABILITY.md, "Usage history").
   */
  recordUsage(
    tenantId: string,
    entry: UsageEntry,
    settings: LeaseSettings,
    host: AdmissionIo,
  ): void {
    const tenant = this.tenant(tenantId);
    tenant.usage.add(entry);
    if (tenant.usage.due(host.now()) && !tenant.calling) {
      sendUsage(tenant, settings, host);
    } else if (!tenant.flushSet && host.later) {
      // One timer per tenant: this request's context stays alive for it (waitUntil),
      // then it sends whatever is waiting, at most USAGE_FLUSH_MS old, since every
      // entry came after the timer was set. An entry after it fires sets the next.
      tenant.flushSet = true;
      const flush = host.later(USAGE_FLUSH_MS).then(() => {
        tenant.flushSet = false;
        return sendUsage(tenant, settings, host);
      });
      host.waitUntil(flush.catch(() => undefined));
    }
  }

  /** The tenant's plan as its guard last said (null: none, or not asked yet). */
  planOf(tenantId: string): string | null {
    return this.tenants.get(tenantId)?.lease.plan ?? null;
  }

  /** Tenants this isolate holds a lease for (the simulation measures their memory). */
  get size(): number {
    return this.tenants.size;
  }

  private tenant(tenantId: string): TenantAdmission {
    let tenant = this.tenants.get(tenantId);
    if (!tenant) {
      if (this.tenants.size >= MAX_TENANTS) {
        const oldest = this.tenants.keys().next().value;
        if (oldest !== undefined) this.tenants.delete(oldest);
      }
      tenant = new TenantAdmission();
      this.tenants.set(tenantId, tenant);
    }
    return tenant;
  }
}

/** This isolate's admission. */
export const isolateAdmission = new Admission();

/**
 * The lease a tenant's self-service reads are admitted from (docs/LIMITS.md,
 * "Self-service reads"): apart from its other requests, so their small meter
 * never reaches the regional brokers, whose pools would otherwise pass the
 * whole tenant through for it (metering/lease-protocol.ts, MIN_POOLED_LIMIT).
 */
export const selfServiceLane = (tenantId: string) => `${tenantId}#self`;

async function call(
  tenant: TenantAdmission,
  settings: LeaseSettings,
  host: AdmissionIo,
  waiting: { scope: Scope; cost: number; queued: number },
): Promise<AdmissionResult> {
  const coordinating = !tenant.calling;
  tenant.calling = true;
  const req = withUsage(tenant, settings, tenant.lease.request(host.now(), settings, waiting));
  try {
    const answer = await keptAlive(host, host.acquire(req));
    const decision = tenant.lease.apply(req, answer, host.now()) ?? UNAVAILABLE;
    if (decision.kind === 'refused') {
      count('limit_refusals');
      count('limit_refusals_asked');
    }
    return decision;
  } catch {
    tenant.downUntil = host.now() + DOWN_FOR_MS;
    return UNAVAILABLE;
  } finally {
    if (coordinating) tenant.calling = false;
  }
}

/** Renews ahead of the lease's end, or tops it up, off the request path. */
function renewInBackground(
  tenant: TenantAdmission,
  settings: LeaseSettings,
  host: AdmissionIo,
): void {
  const now = host.now();
  if (tenant.calling || now < tenant.downUntil || !tenant.lease.renewal(now, settings)) return;
  tenant.calling = true;
  const req = withUsage(tenant, settings, tenant.lease.request(now, settings, null));
  const renewal = host
    .acquire(req)
    .then((answer) => {
      tenant.lease.apply(req, answer, host.now());
    })
    .catch(() => {
      // The lease runs to its end; then requests ask, and the failure mode decides.
    })
    .finally(() => {
      tenant.calling = false;
    });
  host.waitUntil(renewal);
}

/**
 * Sends the waiting usage on its own, with the unused units of this tenant's ended
 * leases, so a quiet tenant's meters come back to what its isolates admitted
 * (docs/LIMITS.md, "Counting"). A call in flight carries the returns itself.
 */
function sendUsage(tenant: TenantAdmission, settings: LeaseSettings, host: AdmissionIo) {
  const batch = tenant.usage.take();
  const returns = tenant.calling ? [] : tenant.lease.takeReturns(host.now());
  if (!batch && returns.length === 0) return;
  const empty = { rows: [], refusals: [] };
  const sent = host.record(batch ?? empty, settings.usageRetentionDays, returns).catch(() => {});
  host.waitUntil(sent);
  return sent;
}

/** The usage gathered so far rides along with a call to the guard (the same request object). */
function withUsage(
  tenant: TenantAdmission,
  settings: LeaseSettings,
  req: LeaseRequest,
): LeaseRequest {
  const usage = tenant.usage.take();
  if (usage) Object.assign(req, { usage, usageRetentionDays: settings.usageRetentionDays });
  return req;
}

/** The call survives its own request ending early (others may be waiting on it). */
function keptAlive<T>(host: AdmissionIo, promise: Promise<T>): Promise<T> {
  host.waitUntil(promise.catch(() => undefined));
  return promise;
}
