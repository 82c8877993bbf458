/**
 * What every part of a tenant's TenantGuard is (docs/ARCHITECTURE.md, "The tenant's
 * guard, in parts"): a class that owns its tables and their invariants, with a small
 * interface: the calls callers may make of it, a const list beside it. Callers reach
 * it through `guardFor(env, id)`, e.g. `guardFor(env, id).recentRequests().query(q)`:
 * one call of the guard, which routes it to the part by name, so it is one round trip
 * (test/guard-parts.test.ts; `npm run bench:rpc` compares it with an RpcTarget per part).
 */

/** The time now, ms since the epoch: the real clock in the guard, a simulated one in tests. */
export type Clock = () => number;

/** What the guard's alarm does for a part. */
export interface Chores {
  /** Deletes the part's rows that no longer count anywhere. */
  sweep?(now: number): void;
  /**
   * Finishes what calls left to the alarm (writes, deliveries, reports); when the part
   * wants the alarm again (Infinity: not for itself).
   */
  catchUp?(now: number): Promise<number>;
}

/** How often the alarm sweeps: a part that writes rows to be swept sets it this far ahead. */
export const SWEEP_EVERY_MS = 3_600_000;
