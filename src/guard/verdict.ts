/**
 * What exact admission (`TenantGuard.admit`) takes and answers, and the
 * meter state shown in RateLimit fields and the usage endpoints.
 */
import type { MeterGrant, Refusal } from './lease-protocol';
import type { LimitGroup, Limits } from './policy';

/** One request checked and counted on its own (exact admission), as `admit` takes it. */
export interface AdmitRequest {
  tokenId: string;
  group: LimitGroup;
  cost: number;
  /** Milliseconds since the epoch; passed in so tests can move time. */
  now: number;
  /** The settings' limits, used while the tenant has none of its own. */
  defaults: Limits;
  partition?: string;
  partitionShare?: number;
}

export interface MeterState {
  name: string;
  kind: 'rate' | 'quota';
  limit: number;
  window_s: number;
  used: number;
  remaining: number;
  /** Seconds until the current count has drained. */
  reset_s: number;
}

export type Verdict =
  | { allowed: true; meters: MeterState[]; cacheVersion: string }
  | ({ allowed: false; meters: MeterState[] } & Refusal);

export function meterState(g: MeterGrant, now: number): MeterState {
  return {
    name: g.name,
    kind: g.kind,
    limit: g.limit,
    window_s: g.window_s,
    used: g.limit - g.remaining,
    remaining: g.remaining,
    reset_s: secondsUntil(g.resetAt, now),
  };
}

export function secondsUntil(at: number, now: number): number {
  return Math.max(1, Math.ceil((at - now) / 1000));
}
