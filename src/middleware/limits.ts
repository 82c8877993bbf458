/**
 * Per-tenant limits. A request is admitted from this isolate's lease of the
 * tenant's budget when it can, without leaving the isolate; otherwise one call
 * to the tenant's TenantGuard decides (limits/admission.ts). Exact-mode
 * tenants make that call on every request. Every response after this point
 * carries the RateLimit fields.
 *
 * @example app.get('/team/lists', tenantAuth(), tenantLimits('teams', () => 1), handler)
 */
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { humanDuration } from '../duration';
import { GatewayError } from '../errors';
import { isolateAdmission, selfServiceLane } from '../limits/admission';
import { rateLimitHeaders } from '../limits/headers';
import { admissionIo, leaseSettings } from '../limits/request';
import { log } from '../log';
import type { Refusal } from '../metering/lease-protocol';
import type { LimitGroup } from '../metering/policy';
import type { HonoEnv } from '../types/context';

/** `group` selects group quotas; `cost` is read per request (ROUTE_OVERRIDES may change it). */
export function tenantLimits(group: LimitGroup, cost: (c: Context<HonoEnv>) => number) {
  return createMiddleware<HonoEnv>(async function tenantLimits(c, next) {
    const settings = c.get('settings');
    if (!settings.LIMITS_ENABLED) return next();
    const tenantId = c.get('tenant').id;
    const scope = { group, tokenId: c.get('token').id, partition: c.get('partition') };
    const units = cost(c);
    // Self-service reads have a lease of their own, from the TenantGuard directly.
    const self = group === 'self';
    const result = await isolateAdmission.admit(
      self ? selfServiceLane(tenantId) : tenantId,
      scope,
      units,
      leaseSettings(settings),
      admissionIo(c, { direct: self }),
    );
    c.set('limiter', {
      result: result.kind,
      cost: units,
      refusedBy:
        result.kind === 'refused' && 'violated' in result.refusal
          ? result.refusal.violated
          : undefined,
      ...(result.kind === 'admitted' ? { charges: result.charges } : {}),
    });

    if (result.kind === 'unavailable') {
      log.error('limiter.unavailable', {
        request_id: c.get('requestId'),
        tenant_id: tenantId,
        mode: settings.LIMITER_FAILURE_MODE,
      });
      if (settings.LIMITER_FAILURE_MODE === 'open') return next();
      throw new GatewayError('LIMITER_UNAVAILABLE', { headers: { 'Retry-After': '1' } });
    }
    const headers = rateLimitHeaders(result.meters);
    if (result.kind === 'refused') throw refusal(result.refusal, headers);
    c.set('cacheVersion', result.cacheVersion);
    await next();
    for (const [name, value] of Object.entries(headers)) c.res.headers.set(name, value);
  });
}

function refusal(r: Refusal, headers: Record<string, string>): GatewayError {
  switch (r.reason) {
    case 'revoked':
      return new GatewayError('TOKEN_REVOKED');
    case 'expired':
      return new GatewayError('TOKEN_EXPIRED');
    case 'disabled':
      return new GatewayError('TENANT_DISABLED');
    case 'too_costly':
      return new GatewayError('RATE_LIMITED', {
        message:
          `This request costs more than "${r.violated}" allows per window (${r.limit}); ` +
          'ask the operator to raise it',
        details: { policy: r.violated, retry_after_s: null },
        headers,
      });
  }
  const retry = String(r.retryAfter);
  const details = { policy: r.violated, retry_after_s: r.retryAfter };
  const withRetry = { ...headers, 'Retry-After': retry };
  return r.reason === 'rate'
    ? new GatewayError('RATE_LIMITED', {
        message: `Rate limit "${r.violated}" exceeded; retry in ${humanDuration(r.retryAfter)}`,
        details,
        headers: withRetry,
      })
    : new GatewayError('QUOTA_EXHAUSTED', {
        message: `Quota "${r.violated}" exhausted; retry in ${humanDuration(r.retryAfter)}`,
        details,
        headers: withRetry,
      });
}
