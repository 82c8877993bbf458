/** A meter's state as RateLimit fields and the usage endpoints show it. */
import type { MeterState } from '../types/wire';
import type { MeterGrant } from './lease-protocol';

export type { MeterState };

/** A grant's meter as of `now`; `remaining` as its holder sees it (metering/lease-window.ts). */
export function meterState(g: MeterGrant, now: number, remaining = g.remaining): MeterState {
  return {
    name: g.name,
    kind: g.kind,
    limit: g.limit,
    window_s: g.window_s,
    used: g.limit - remaining,
    remaining,
    reset_s: secondsUntil(g.resetAt, now),
  };
}

export function secondsUntil(at: number, now: number): number {
  return Math.max(1, Math.ceil((at - now) / 1000));
}
