/**
 * src/metering/ is what isolates (src/limits/) and Durable Objects (src/objects/)
 * share, below both so either may import it: policies and their meters
 * (policy.ts), this protocol, the lease windows both keep (lease-window.ts),
 * a meter's state (meter-state.ts) and usage rows (usage.ts).
 *
 * What isolates and a tenant's TenantGuard say to each other (docs/STORAGE.md,
 * "Leases"). An isolate asks for the units its requests need now (`cost`) and
 * for more to admit on its own until the lease ends (`want`); the guard counts
 * both as used when it grants them, so no number of isolates can admit more
 * than a limit. Unused units come back with the next call.
 */

import type { LimiterMode, Limits, MeterOptions, Scope } from './policy';
import type { UsageBatch } from './usage';

/** One scope (tenant + group + token + partition) the isolate admits requests for. */
export interface ScopeAsk extends Scope {
  /**
   * Units of the request waiting on this answer, admitted now or refused; 0 for
   * renewals and for a cost-0 request, whose standing alone is checked.
   */
  cost: number;
  /** Units wanted on lease for this scope, beyond `cost`. */
  want: number;
}

/** Units of an ended lease that were never admitted. */
export interface Returned {
  meter: string;
  slot: number;
  units: number;
}

export interface LeaseRequest {
  now: number;
  /**
   * Start of the lease asked for: `now`, or the end of the isolate's current
   * lease when it renews ahead, so a steady tenant never waits at a boundary.
   */
  start: number;
  leaseMaxMs: number;
  defaults: Limits;
  meterOptions: MeterOptions;
  scopes: ScopeAsk[];
  returns: Returned[];
  /** A background renewal rather than a request waiting on the answer. */
  renewal: boolean;
  /** Usage gathered since the last call (limits/usage-buffer.ts), handed over on the way. */
  usage?: UsageBatch;
  /** How long the guard keeps usage history (USAGE_RETENTION_DAYS). */
  usageRetentionDays?: number;
  /** A regional broker's name (objects/broker/broker.ts): the root pushes operator changes to it. */
  holder?: string;
  /** Calls isolates made to that broker since its last call, for the usage endpoint. */
  brokerCalls?: BrokerCalls;
}

/** Calls isolates made to a broker, by kind. */
export interface BrokerCalls {
  acquires: number;
  renewals: number;
}

export type Refusal =
  | { reason: 'revoked' | 'expired' | 'disabled' }
  | { reason: 'rate' | 'quota'; violated: string; retryAfter: number }
  | { reason: 'too_costly'; violated: string; limit: number };

/** A meter as granted: its lease and what the RateLimit fields need. */
export interface MeterGrant {
  key: string;
  name: string;
  kind: 'rate' | 'quota';
  limit: number;
  /** Window length to report (`w`), in seconds. */
  window_s: number;
  /** Slot the lease was charged to (returns name it). */
  slot: number;
  /** Units on lease to this isolate. */
  leased: number;
  /** Units left for everyone after this answer's charges and leases. */
  remaining: number;
  /** When the current count will have drained (`t`), ms since the epoch. */
  resetAt: number;
  /** When a single unit fits again, if none is left (local refusals use it). */
  fitsAgainAt: number | null;
}

export interface ScopeGrant {
  /** Keys of the meters a request of this scope is counted against. */
  meters: string[];
  /** When the scope's token stops working (revoked: now), and why; null while it is valid. */
  tokenEnd: { at: number; reason: 'revoked' | 'expired' } | null;
  /** Null while the token and tenant stand and `cost` (if any) fits; else why not. */
  refusal: Refusal | null;
  /**
   * The TenantGuard admitted `cost` itself and counted it as spent: the isolate reports
   * none of it (limits/usage-buffer.ts reports what leases admitted).
   */
  spent?: boolean;
}

export interface LeaseAnswer {
  mode: LimiterMode;
  disabled: boolean;
  cacheVersion: string;
  /** The plan the tenant is on (null: none), for its usage events; absent from older guards. */
  plan?: string | null;
  /** The lease holds from `start` until `expiresAt` (ms); nothing is leased in exact mode. */
  start: number;
  expiresAt: number;
  /** In the order of the request's scopes. */
  scopes: ScopeGrant[];
  meters: MeterGrant[];
}

/**
 * Meters below this many units a window are not pooled by brokers (broker.ts): a
 * few units parked in one region's pool would be refused to every other region
 * until the pool returned them. The root leases a broker nothing of such a meter,
 * so even a broker's first call, made before it knows the limits, parks nothing;
 * the broker then passes the tenant's calls through and sends its isolates to the
 * root directly.
 */
export const MIN_POOLED_LIMIT = 100;

/**
 * What the root pushes to the brokers holding its leases after an operator
 * change, before answering the operator (broker.ts, `apply`). A token's end, a
 * disable and a cache purge are applied to what the broker knows, so its pool
 * keeps serving the tenant's other tokens; new limits, or an enable, make it
 * drop everything and learn again (`reset`).
 */
export type BrokerPush =
  | { kind: 'token'; tokenId: string; end: { at: number; reason: 'revoked' | 'expired' } }
  | { kind: 'disabled' }
  | { kind: 'cache'; version: string }
  | { kind: 'reset' };

/** The same scope gets the same key in every isolate. */
export function scopeKey(scope: Scope): string {
  return `${scope.group}|${scope.tokenId}|${scope.partition ?? ''}`;
}

/**
 * An isolate's want, over the lease granted, when it expects one request in that
 * lease (limits/lease.ts asks for twice what it expects). The root rounds a busy
 * isolate's share of what is left up, any other's down (objects/tenant/limits/limits-part.ts).
 */
export const BUSY_WANT = 2;
