/** The resilience settings' defaults (docs/RESILIENCE.md), for the upstream unit tests. */
import type { ResilienceOptions } from './upstream-health';

export const DEFAULT_RESILIENCE: ResilienceOptions = {
  breaker: {
    consecutiveFailures: 5,
    failureRatio: 0.8,
    windowMs: 10_000,
    minCalls: 20,
    cooldownMs: 5000,
    probeTimeoutMs: 30_000,
  },
  retry: { ratio: 0.1, minPerSecond: 2, windowMs: 10_000 },
  maxPauseMs: 60_000,
};
