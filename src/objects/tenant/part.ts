/**
 * What every part of a tenant's TenantGuard is (docs/ARCHITECTURE.md, "The tenant's
 * guard, in parts"): a class that owns its tables and their invariants, extends
 * RpcTarget, and is reached by callers through one method of the guard, e.g.
 * `guardFor(env, id).recentRequests().query(q)`. Workers RPC pipelines that call on
 * the part before the part's stub has come back, so it stays one round trip
 * (test/guard-parts.test.ts; `npm run bench:rpc`). The guard's methods return each
 * part as its Handle: callers see its small interface, not what the guard's other
 * parts and its alarm use.
 */
import type { RpcTarget } from 'cloudflare:workers';

/** The methods of part `P` that callers reach over RPC (`K`: their names, a const list). */
export type Handle<P, K extends readonly (keyof P)[]> = Pick<P, K[number]> & RpcTarget;

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
