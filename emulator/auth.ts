// Platform-key check. Each route reads the key only from the header that
// PLATFORM.md names for it, so a gateway that injects the key into the wrong
// header gets the same 401 the live platform would give.
import type { MiddlewareHandler } from 'hono';
import type { EmuEnv } from './http';

export type KeyHeader = 'authorization' | 'x-api-key';

export const UNAUTHORIZED = {
  code: 401,
  msg: 'Unauthorized: invalid or missing API key',
  data: null,
} as const;

/** The key carried by a header value: raw, or `Bearer <key>` in Authorization. */
export function keyFromHeader(header: KeyHeader, value: string | undefined): string | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  if (header === 'authorization') {
    const m = /^bearer\s+(.+)$/i.exec(v);
    if (m) return m[1]!.trim();
  }
  return v;
}

export function requireKey(header: KeyHeader): MiddlewareHandler<EmuEnv> {
  return async function platformKey(c, next) {
    const secret = keyFromHeader(header, c.req.header(header));
    const found = secret === undefined ? undefined : c.get('state').findKey(secret);
    if (!found) return c.json(UNAUTHORIZED, 401);
    found.key.last_used_at = new Date().toISOString();
    c.set('account', found.account);
    c.set('key', found.key);
    await next();
  };
}
