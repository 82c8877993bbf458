/**
 * Per-isolate counters of the work requests cause: what the benchmark reads
 * (`GET /admin/stats`) to report KV reads, Cache API calls and TenantGuard
 * calls per request, counted where they happen rather than guessed.
 */
export const isolateCounters = {
  /** When this isolate started counting (ms since the epoch). */
  started_at: Date.now(),
  requests: 0,
  kv_reads: 0,
  cache_api_calls: 0,
  guard_calls: 0,
  /** Requests the limiter refused, and those of them a guard call answered (not a refusal lease). */
  limit_refusals: 0,
  limit_refusals_asked: 0,
  /** Calls to the platform, retries included, and what the resilience layer answered itself. */
  upstream_calls: 0,
  upstream_retries: 0,
  breaker_refusals: 0,
  held_refusals: 0,
  stale_if_error: 0,
  /** Usage events produced to the export's queue, and those that could not be (docs/BILLING.md). */
  usage_events: 0,
  usage_events_lost: 0,
};

export type CountedWork = Exclude<keyof typeof isolateCounters, 'started_at'>;

export function count(work: CountedWork, n = 1): void {
  isolateCounters[work] += n;
}
