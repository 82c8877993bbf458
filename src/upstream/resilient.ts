/**
 * A platform call that behaves when the platform falters (docs/RESILIENCE.md),
 * per upstream and per isolate:
 * - a pause the platform asked for (holds.ts) is answered at once;
 * - an open circuit breaker (breaker.ts) is answered at once with 50301;
 * - an idempotent read that failed before any answer byte, or with a
 *   502/503/504 without Retry-After, is tried once more after a short random
 *   pause, inside the same deadline and only while the retry budget
 *   (retry-budget.ts) has room. Writes are never retried.
 */
import { GatewayError } from '../errors';
import { count } from '../stats';
import { type BreakerOptions, CircuitBreaker } from './breaker';
import { callPlatform, failedBeforeAnswer } from './fetch';
import { type Hold, Holds } from './holds';
import type { UpstreamResult } from './normalize';
import type { UpstreamRequest } from './request';
import { RetryBudget, type RetryBudgetOptions } from './retry-budget';

export interface ResilienceOptions {
  breaker: BreakerOptions;
  retry: RetryBudgetOptions;
}

export interface ResilientCall {
  /** The platform's base URL: each has its own breaker, holds and retry budget. */
  upstream: string;
  /** Fingerprint of the platform key (a 429's hold is per key); never the key. */
  keyId: string;
  request: UpstreamRequest;
  /** GETs only: whether a failed attempt may be retried. */
  idempotent: boolean;
  deadlineMs: number;
  options: ResilienceOptions;
  /** Each attempt made, for the request log. */
  onAttempt?: (attempt: number) => void;
  now?: () => number;
  random?: () => number;
}

/** The longest random pause before a retry, in ms; a retry needs this much deadline left too. */
const MAX_JITTER_MS = 100;
const MIN_TIME_FOR_RETRY_MS = 100;

interface UpstreamHealth {
  key: string;
  breaker: CircuitBreaker;
  holds: Holds;
  budget: RetryBudget;
}

const health = new Map<string, UpstreamHealth>();

/** This isolate's breaker, holds and budget for an upstream (new ones when settings change). */
function healthOf(upstream: string, options: ResilienceOptions): UpstreamHealth {
  const key = JSON.stringify(options);
  let h = health.get(upstream);
  if (!h || h.key !== key) {
    h = {
      key,
      breaker: new CircuitBreaker(options.breaker),
      holds: h?.holds ?? new Holds(),
      budget: new RetryBudget(options.retry),
    };
    health.set(upstream, h);
  }
  return h;
}

/** The breaker's state for GET /admin/stats. */
export function breakerStates(now = Date.now()): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [upstream, h] of health) out[upstream] = h.breaker.state(now);
  return out;
}

export async function callResilient(call: ResilientCall): Promise<UpstreamResult> {
  const now = call.now ?? Date.now;
  const h = healthOf(call.upstream, call.options);
  refuseIfHeld(h.holds.heldAt(call.keyId, now()), now());
  const permit = h.breaker.permit(now());
  if (!permit.allowed) throw breakerOpen(permit.retryAfterMs);
  h.budget.noteCall(now());

  const started = now();
  const deadline = { signal: AbortSignal.timeout(call.deadlineMs), ms: call.deadlineMs };
  for (let attempt = 1; ; attempt++) {
    call.onAttempt?.(attempt);
    count('upstream_calls');
    try {
      const result = await callPlatform(call.request, deadline);
      h.breaker.success(now());
      return result;
    } catch (err) {
      noteFailure(h, call.keyId, err, now());
      const left = call.deadlineMs - (now() - started);
      const again =
        attempt === 1 &&
        call.idempotent &&
        !permit.probe &&
        retryable(err) &&
        left > MAX_JITTER_MS + MIN_TIME_FOR_RETRY_MS &&
        h.breaker.permit(now()).allowed &&
        h.budget.tryRetry(now());
      if (!again) throw err;
      count('upstream_retries');
      await new Promise((r) => setTimeout(r, (call.random ?? Math.random)() * MAX_JITTER_MS));
    }
  }
}

/** A pause the platform asked for is still running: answer at once with what it said. */
function refuseIfHeld(hold: Hold | null, now: number): void {
  if (!hold) return;
  count('held_refusals');
  const seconds = Math.max(1, Math.ceil((hold.until - now) / 1000));
  const kind = hold.scope === 'key' ? 'UPSTREAM_RATE_LIMITED' : 'UPSTREAM_BACKING_OFF';
  throw new GatewayError(kind, {
    message: `Platform asked for a pause; retry in ${seconds} s`,
    details: { held: true, retry_after_s: seconds },
    headers: { 'Retry-After': String(seconds) },
  });
}

function breakerOpen(retryAfterMs: number): GatewayError {
  count('breaker_refusals');
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new GatewayError('UPSTREAM_UNAVAILABLE', {
    message: `Platform is failing; retry in ${seconds} s`,
    details: { retry_after_s: seconds },
    headers: { 'Retry-After': String(seconds) },
  });
}

/** Counts the outcome for the breaker and starts any pause the platform asked for. */
function noteFailure(h: UpstreamHealth, keyId: string, err: unknown, now: number): void {
  if (!(err instanceof GatewayError)) return;
  const pause = err.details.retry_after_s;
  if (typeof pause === 'number') {
    if (err.kind === 'UPSTREAM_RATE_LIMITED') h.holds.holdKey(keyId, now + pause * 1000, now);
    if (err.kind === 'UPSTREAM_BACKING_OFF') h.holds.holdAll(now + pause * 1000);
  }
  if (platformFailed(err)) h.breaker.failure(now);
  else h.breaker.success(now);
}

/** Connection failures, timeouts and 5xx answers count against the platform; 4xx do not. */
export function platformFailed(err: GatewayError): boolean {
  if (err.kind === 'UPSTREAM_UNREACHABLE' || err.kind === 'UPSTREAM_TIMEOUT') return true;
  const status = err.details.upstream_status;
  return typeof status === 'number' && status >= 500;
}

/** Worth one more try for a read: no answer at all, or a gateway-ish 5xx without Retry-After. */
function retryable(err: unknown): boolean {
  if (failedBeforeAnswer(err)) return true;
  if (!(err instanceof GatewayError) || err.kind !== 'UPSTREAM_HTTP_ERROR') return false;
  const status = err.details.upstream_status;
  return status === 502 || status === 503 || status === 504;
}
