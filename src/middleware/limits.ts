/**
 * Per-tenant limits: one TenantGuard call per request checks revocation,
 * every rate policy and every quota, and counts the request. Every response
 * after this point carries freshly computed RateLimit fields.
 *
 * @example app.get('/team/lists', tenantAuth(), tenantLimits('teams', () => 1), handler)
 */
import { createMiddleware } from 'hono/factory';
import type { HonoEnv } from '../env';
import { GatewayError } from '../errors';
import { guardFor, type Verdict } from '../limits/guard';
import { rateLimitHeaders } from '../limits/headers';
import type { LimitGroup } from '../limits/policy';
import { log } from '../log';
import type { Settings } from '../settings';
import { count } from '../stats';

/** `group` selects group quotas; `cost` is read per request (settings may override it). */
export function tenantLimits(group: LimitGroup, cost: (settings: Settings) => number) {
  return createMiddleware<HonoEnv>(async function tenantLimits(c, next) {
    const settings = c.var.settings;
    if (!settings.LIMITS_ENABLED) return next();

    let verdict: Verdict;
    try {
      count('guard_calls');
      verdict = await guardFor(c.env, c.var.tenant.id).admit({
        tokenId: c.var.token.id,
        group,
        cost: cost(settings),
        now: Date.now(),
        defaults: settings.DEFAULT_LIMITS,
        partition: c.var.partition,
        partitionShare: settings.BROWSER_PARTITION_SHARE,
      });
    } catch (err) {
      log.error('limiter.unavailable', {
        request_id: c.var.requestId,
        tenant_id: c.var.tenant.id,
        error: err instanceof Error ? err.name : 'unknown',
        mode: settings.LIMITER_FAILURE_MODE,
      });
      if (settings.LIMITER_FAILURE_MODE === 'open') return next();
      throw new GatewayError('LIMITER_UNAVAILABLE', { headers: { 'Retry-After': '1' } });
    }

    const headers = rateLimitHeaders(verdict.meters);
    if (!verdict.allowed) throw refusal(verdict, headers);
    c.set('cacheVersion', verdict.cacheVersion);
    await next();
    for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
  });
}

function refusal(
  verdict: Exclude<Verdict, { allowed: true }>,
  headers: Record<string, string>,
): GatewayError {
  switch (verdict.reason) {
    case 'revoked':
      return new GatewayError('TOKEN_REVOKED');
    case 'expired':
      return new GatewayError('TOKEN_EXPIRED');
    case 'disabled':
      return new GatewayError('TENANT_DISABLED');
    case 'too_costly':
      return new GatewayError('RATE_LIMITED', {
        message: `This request costs more than "${verdict.violated}" allows per window (${verdict.limit}); ask the operator to raise it`,
        details: { policy: verdict.violated, retry_after_s: null },
        headers,
      });
  }
  const retry = String(verdict.retryAfter);
  const details = { policy: verdict.violated, retry_after_s: verdict.retryAfter };
  const withRetry = { ...headers, 'Retry-After': retry };
  return verdict.reason === 'rate'
    ? new GatewayError('RATE_LIMITED', {
        message: `Rate limit "${verdict.violated}" exceeded; retry in ${retry} s`,
        details,
        headers: withRetry,
      })
    : new GatewayError('QUOTA_EXHAUSTED', {
        message: `Quota "${verdict.violated}" exhausted; retry in ${retry} s`,
        details,
        headers: withRetry,
      });
}
