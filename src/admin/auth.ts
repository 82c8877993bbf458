/**
 * Operator authentication: `Authorization: Bearer <ADMIN_TOKEN>`, compared in
 * constant time. Without ADMIN_TOKEN the operator API does not exist.
 */
import { createMiddleware } from 'hono/factory';
import type { HonoEnv } from '../env';
import { GatewayError } from '../errors';

export function adminAuth() {
  return createMiddleware<HonoEnv>(async function adminAuth(c, next) {
    const expected = c.get('settings').ADMIN_TOKEN;
    if (!expected) throw new GatewayError('ADMIN_DISABLED');
    const presented = /^Bearer\s+(\S+)$/i.exec(c.req.header('authorization') ?? '')?.[1] ?? '';
    if (!(await sameSecret(presented, expected))) throw new GatewayError('ADMIN_UNAUTHORIZED');
    await next();
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
