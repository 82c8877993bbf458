/**
 * A platform call that behaves when the platform falters (docs/RESILIENCE.md),
 * per upstream and per isolate, with failure state kept per platform key
 * (upstream-health.ts):
 * - a pause the platform asked for, of this key or (on several keys' word)
 *   of the whole upstream, is answered at once;
 * - an open circuit breaker, this key's or the upstream's, is answered at
 *   once with 50301;
 * - an idempotent read that failed before any answer byte, or with a
 *   502/503/504 without Retry-After, is tried once more after a short random
 *   pause, inside the same deadline and only while the key's retry budget and
 *   the upstream's have room. Writes are never retried.
 * - a call that failed by the caller's fault (an upload refused mid-way, or
 *   still arriving at the deadline) counts for nothing: a probe it held is
 *   given back.
 */

import { humanDuration } from '../duration';
import { GatewayError } from '../errors';
import { count } from '../stats';
import { callPlatform, failedBeforeAnswer, failedByCaller } from './fetch';
import { backoffAsHeld, type UpstreamResult } from './normalize';
import type { UpstreamRequest } from './request';
import {
  type HealthRefusal,
  type HealthSummary,
  type Outcome,
  type ResilienceOptions,
  UpstreamHealth,
} from './upstream-health';

export type { ResilienceOptions } from './upstream-health';

export interface ResilientCall {
  /** The platform's base URL: each has its own failure state. */
  upstream: string;
  /** Fingerprint of the platform key (failure state is per key); never the key. */
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

const health = new Map<
  string,
  { options: ResilienceOptions; key: string; health: UpstreamHealth }
>();

/** This isolate's failure state for an upstream (afresh when its settings change). */
function healthOf(upstream: string, options: ResilienceOptions): UpstreamHealth {
  let h = health.get(upstream);
  // The same options object (forward.ts makes one per settings object) needs no comparing.
  if (h?.options === options) return h.health;
  const key = JSON.stringify(options);
  if (h?.key === key) h.options = options;
  else {
    h = { options, key, health: new UpstreamHealth(options) };
    health.set(upstream, h);
  }
  return h.health;
}

/** Each upstream's breaker state and its keys' in brief, for GET /admin/stats (never a key). */
export function breakerStates(now = Date.now()): Record<string, HealthSummary> {
  const out: Record<string, HealthSummary> = {};
  for (const [upstream, h] of health) out[upstream] = h.health.summary(now);
  return out;
}

export async function callResilient(call: ResilientCall): Promise<UpstreamResult> {
  const now = call.now ?? Date.now;
  const h = healthOf(call.upstream, call.options);
  const ticket = h.admit(call.keyId, now());
  if (!('allowed' in ticket)) throw refusal(ticket, now());

  const started = now();
  const deadline = { signal: AbortSignal.timeout(call.deadlineMs), ms: call.deadlineMs };
  for (let attempt = 1; ; attempt++) {
    call.onAttempt?.(attempt);
    count('upstream_calls');
    try {
      const result = await callPlatform(call.request, deadline);
      h.settle(ticket, { failed: false }, now());
      return result;
    } catch (err) {
      // The caller's fault (its upload refused or too slow) says nothing of the platform.
      if (failedByCaller(err)) {
        h.release(ticket);
        throw err;
      }
      if (err instanceof GatewayError) {
        h.settle(ticket, outcomeOf(err), now());
        // A 503's pause says the gateway's hold, as every held answer after it does.
        if (err.kind === 'UPSTREAM_BACKING_OFF') throw backoffAsHeld(err, call.options.maxPauseMs);
      }
      const left = call.deadlineMs - (now() - started);
      const again =
        attempt === 1 &&
        call.idempotent &&
        retryable(err) &&
        left > MAX_JITTER_MS + MIN_TIME_FOR_RETRY_MS &&
        h.tryRetry(ticket, now());
      if (!again) throw err;
      count('upstream_retries');
      await new Promise((r) => setTimeout(r, (call.random ?? Math.random)() * MAX_JITTER_MS));
    }
  }
}

/** The answer to a call refused without calling the platform. */
function refusal(r: HealthRefusal, now: number): GatewayError {
  const forKey = r.scope === 'key' ? ' for this platform key' : '';
  if (r.refused === 'held') {
    count('held_refusals');
    const seconds = Math.max(1, Math.ceil((r.until - now) / 1000));
    return new GatewayError(r.kind === 'rate' ? 'UPSTREAM_RATE_LIMITED' : 'UPSTREAM_BACKING_OFF', {
      message: `Platform asked for a pause${forKey}; retry in ${humanDuration(seconds)}`,
      details: { held: true, scope: r.scope, retry_after_s: seconds },
      headers: { 'Retry-After': String(seconds) },
    });
  }
  count('breaker_refusals');
  const seconds = Math.max(1, Math.ceil(r.retryAfterMs / 1000));
  return new GatewayError('UPSTREAM_UNAVAILABLE', {
    message: `Platform is failing${forKey}; retry in ${humanDuration(seconds)}`,
    details: { scope: r.scope, retry_after_s: seconds },
    headers: { 'Retry-After': String(seconds) },
  });
}

/** What a failed attempt means for the state: a platform failure or not, and any pause asked. */
function outcomeOf(err: GatewayError): Outcome {
  const seconds = err.details.retry_after_s;
  const failed = platformFailed(err);
  if (typeof seconds !== 'number') return { failed };
  if (err.kind === 'UPSTREAM_RATE_LIMITED') return { failed, pause: { kind: 'rate', seconds } };
  if (err.kind === 'UPSTREAM_BACKING_OFF') return { failed, pause: { kind: 'backoff', seconds } };
  return { failed };
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
