/**
 * Operator authentication: `Authorization: Bearer <ADMIN_TOKEN>`, compared in
 * constant time. Without ADMIN_TOKEN the operator API does not exist.
 *
 * Wrong tokens are counted per client network (middleware/preauth.ts); past
 * the limit they get a 429 with Retry-After instead of a 401. The right token
 * is always compared and always let in, so nobody sharing an address with a
 * guesser can lock the operators out; what makes guessing hopeless is the
 * token's length (docs/SECURITY.md, "Threat model").
 */
import { createMiddleware } from 'hono/factory';
import { GatewayError } from '../errors';
import { log } from '../log';
import { clientIp, countAgainstClient, isThrottled, throttled } from '../middleware/preauth';
import type { HonoEnv } from '../types/context';

export function adminAuth() {
  return createMiddleware<HonoEnv>(async function adminAuth(c, next) {
    const expected = c.get('settings').ADMIN_TOKEN;
    if (!expected) throw new GatewayError('ADMIN_DISABLED');
    const presented = /^Bearer\s+(\S+)$/i.exec(c.req.header('authorization') ?? '')?.[1] ?? '';
    if (await sameSecret(presented, expected)) return next();
    const alreadyThrottled = isThrottled(c, 'admin-auth');
    if (!alreadyThrottled) await countAgainstClient(c, 'admin-auth');
    if (isThrottled(c, 'admin-auth')) {
      // Once per address and period, not once per guess.
      if (!alreadyThrottled) {
        log.warn('admin.auth_throttled', { request_id: c.get('requestId'), ip: clientIp(c) });
      }
      throw throttled('admin-auth');
    }
    throw new GatewayError('ADMIN_UNAUTHORIZED');
  });
}

/** Hashing first gives equal-length inputs, so timing reveals neither content nor length. */
async function sameSecret(a: string, b: string): Promise<boolean> {
  const encoder = new TextEncoder();
  const [ha, hb] = await Promise.all([
    crypto.subtle.digest('SHA-256', encoder.encode(a)),
    crypto.subtle.digest('SHA-256', encoder.encode(b)),
  ]);
  return crypto.subtle.timingSafeEqual(ha, hb);
}
