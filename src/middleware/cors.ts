/**
 * CORS per tenant. A preflight carries no token, so it is answered at the
 * edge (never forwarded) when some tenant allows the origin; the real request
 * is then checked against its own tenant's origins (middleware/auth.ts). A
 * disallowed origin gets no CORS grant and a 403 envelope.
 *
 * @example app.use(browserCors())
 */
import { createMiddleware } from 'hono/factory';
import { GatewayError } from '../errors';
import { memoizedStores } from '../tenants/stores';
import type { HonoEnv } from '../types/context';
import { isOwnOrigin, originAllowed } from './auth';
import { assertNotThrottled, countAgainstClient } from './preauth';

/** How long a browser may reuse a preflight answer (docs/BOUNDS.md). */
export const PREFLIGHT_MAX_AGE_S = 600;
const ALLOW_HEADERS =
  'authorization, x-api-key, content-type, x-request-id, cache-control, idempotency-key, traceparent, tracestate, mcp-protocol-version, mcp-method, mcp-name';
const EXPOSE_HEADERS =
  'X-Request-ID, RateLimit, RateLimit-Policy, Retry-After, X-Platform-Retry-After, X-Cache, Age, X-Stale-Reason, Warning, Idempotent-Replayed, traceparent, WWW-Authenticate';

export function browserCors() {
  return createMiddleware<HonoEnv>(async function browserCors(c, next) {
    const origin = c.req.header('origin');
    // The operator API is never for browsers: no preflight answer, no grant. The
    // gateway's own pages (/docs, /portal) are same-origin: they need no grant.
    if (!origin || c.req.path.startsWith('/admin') || isOwnOrigin(c, origin)) return next();
    const settings = c.get('settings');
    // A lookup KV must answer counts against the client: floods of made-up origins are cut off.
    const known = async () =>
      (await memoizedStores(c.env, settings)).origins.known(origin, async () => {
        assertNotThrottled(c, 'origin');
        await countAgainstClient(c, 'origin');
        assertNotThrottled(c, 'origin');
      });

    if (c.req.method === 'OPTIONS' && c.req.header('access-control-request-method')) {
      if (!(await known()))
        throw new GatewayError('ORIGIN_NOT_ALLOWED', {
          message: `Origin ${origin} is not allowed`,
        });
      return c.body(null, 204, {
        'Access-Control-Allow-Origin': origin,
        'Access-Control-Allow-Methods': 'GET, POST, PUT, DELETE',
        'Access-Control-Allow-Headers': ALLOW_HEADERS,
        'Access-Control-Max-Age': String(PREFLIGHT_MAX_AGE_S),
        Vary: 'Origin',
      });
    }

    await next();
    // Grant only what this request's tenant allows; before authentication
    // (a 401, say) any tenant's allowance lets the page read the envelope.
    const tenant = c.get('tenant');
    const allowed = tenant ? originAllowed(c, origin, tenant, c.get('token') ?? {}) : await known();
    if (allowed && c.res.status !== 101) {
      c.res.headers.set('Access-Control-Allow-Origin', origin);
      c.res.headers.set('Access-Control-Expose-Headers', EXPOSE_HEADERS);
      c.res.headers.append('Vary', 'Origin');
    }
  });
}
