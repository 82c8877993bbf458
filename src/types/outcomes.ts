/**
 * What the steps of a request did, as the steps after them read it (types/context.ts's
 * Variables): the request log builds its line from these at the end. Types only.
 */

export type CacheStatus = 'HIT' | 'MISS' | 'STALE' | 'BYPASS';
/** Where a hit came from: this isolate's memory or the Cache API. */
export type CacheTier = 'L1' | 'L2';

/** A platform answer as the gateway passes it on (upstream/normalize.ts's UpstreamResult). */
export interface PlatformAnswer {
  status: number;
  body: Uint8Array<ArrayBuffer>;
  /** Parsed envelope; null when served from the cache (only successes are cached). */
  envelope: { code: number } | null;
  /** The body decoded, where it already was, so nothing decodes it twice. */
  text?: string;
}

/** What forward() did with one platform call (src/forward.ts), for whatever reads it after. */
export interface ForwardOutcome {
  /** The answer as this caller may see it; null when the call failed. */
  answer: PlatformAnswer | null;
  /** Why there is no answer: what the caller is told instead. */
  error: unknown;
  /** The platform may have acted: a write went out and was not refused as a pause. */
  acted: boolean;
  /** Platform attempts made (2 when a read was retried; a stale answer's refresh counts). */
  attempts: number;
  upstreamStatus: number | undefined;
  upstreamMs: number | undefined;
  /** Where the answer came from; undefined when the call failed. */
  cache: CacheStatus | undefined;
  tier: CacheTier | undefined;
  /** Seconds since the answer was fetched from the platform. */
  age: number;
  /** Why a stale entry answered because the platform failed (`breaker_open`, …). */
  staleReason: string | undefined;
  /** The key's health: the status (401 or 403) with which the platform refused the tenant's key. */
  keyRejected: number | undefined;
  /** What may be kept of the answer (an Idempotency-Key's replay): every secret masked. */
  keptAnswer(): KeptAnswer | null;
}

/** An answer as kept: its status, its body with every platform secret masked, its code. */
export interface KeptAnswer {
  status: number;
  body: string;
  code: number;
}

/** What the tenant's limits decided for a request (middleware/limits.ts). */
export interface LimiterVerdict {
  result: 'admitted' | 'refused' | 'unavailable';
  /** Units the request costs. */
  cost: number;
  /** The policy that refused it. */
  refusedBy: string | undefined;
  /**
   * Admitted: each meter's slot its units were counted in (metering/usage.ts's MeterCharge),
   * reported with the usage batch as units spent.
   */
  charges?: readonly { meter: string; slot: number }[];
}

/** What an Idempotency-Key's claim found (objects/tenant/idempotency/idempotency-part.ts's Claim, as far as it is read). */
export type IdempotencyClaim =
  | { kind: 'claimed' | 'in_flight' | 'mismatch' }
  | { kind: 'replay'; answer: { code: number | null } };
