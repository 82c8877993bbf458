/**
 * Brokers split when hot (docs/LIMITS.md, "Hierarchical leases"). A tenant's
 * broker in a region starts as one Durable Object; one that serves more than
 * SPLIT_CALLS_PER_S tells its isolates to spread over twice as many, and each
 * data center then uses shard `hash(colo) mod shards` (limits/region.ts). A quiet tenant never
 * splits, so thin traffic keeps one well-stocked pool per region; a global
 * one at 1M/min spreads until no broker is near the ~1,000 calls a second one
 * object serves. Shards are named by index only, so doubling keeps every
 * existing broker (and its pool) in use.
 */

/** Calls a second above which a broker advises more shards (half the 500/s goal). */
export const SPLIT_CALLS_PER_S = 250;
/** What a broker should serve after a split: the advice aims below the split point. */
const TARGET_CALLS_PER_S = 150;
/** At most this many brokers per tenant and region. */
export const MAX_BROKER_SHARDS = 16;

/**
 * A broker's advice with its answer when it is hot: enough shards (a power of two, at
 * least twice today's) for each to serve about TARGET_CALLS_PER_S; else none.
 */
export function spreadAdvice(callsPerSecond: number, shards: number): number | undefined {
  if (callsPerSecond <= SPLIT_CALLS_PER_S || shards >= MAX_BROKER_SHARDS) return undefined;
  const wanted = (shards * callsPerSecond) / TARGET_CALLS_PER_S;
  return Math.min(MAX_BROKER_SHARDS, Math.max(shards * 2, 2 ** Math.ceil(Math.log2(wanted))));
}

/** Buckets of the call rate's window: four quarters of a second. */
const BUCKET_MS = 250;
const BUCKETS = 4;

/**
 * Calls in the last second, in quarter-second buckets (the current one included), so a
 * broker that turns hot says so within a quarter of a second. No allocation per call.
 */
export class CallRate {
  private readonly counts = new Array<number>(BUCKETS).fill(0);
  private bucket = 0;

  record(now: number): void {
    this.roll(now);
    const at = this.bucket % BUCKETS;
    this.counts[at] = (this.counts[at] ?? 0) + 1;
  }

  perSecond(now: number): number {
    this.roll(now);
    return this.counts.reduce((sum, n) => sum + n, 0);
  }

  private roll(now: number): void {
    const bucket = Math.floor(now / BUCKET_MS);
    // Empty every bucket passed since the last call (all of them after a second's quiet).
    for (let b = Math.max(this.bucket + 1, bucket - BUCKETS + 1); b <= bucket; b++) {
      this.counts[b % BUCKETS] = 0;
    }
    this.bucket = Math.max(this.bucket, bucket);
  }
}
