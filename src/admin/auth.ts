/**
 * Operator authentication, two ways (docs/CONSOLE.md, "Access"):
 * - `Authorization: Bearer <ADMIN_TOKEN>`, compared in constant time: for
 *   automation (CLI, CI); the role is admin and the actor `admin-token`.
 * - Otherwise a Cloudflare Access JWT (`Cf-Access-Jwt-Assertion`, or the
 *   `CF_Authorization` cookie Access sets for the browser), verified in
 *   admin/access.ts; the role comes from ACCESS_ROLES. A viewer may read and
 *   nothing else. Locally `npm start` runs a loopback Access that signs the
 *   same kind of JWT, so this same code verifies it.
 * Without either setting the operator API does not exist.
 *
 * Wrong ADMIN_TOKENs are counted per client network (middleware/preauth.ts);
 * past the limit, every operator-token attempt from that network, the right
 * token too, gets the same 429 until the window passes (admin/auth-throttle.ts),
 * so the answers never say which guess was right (docs/SECURITY.md, "Operator
 * authentication"). Access sign-ins are not throttled by it.
 */
import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';
import { createMiddleware } from 'hono/factory';
import { GatewayError } from '../errors';
import { log } from '../log';
import type { HonoEnv, Operator } from '../types/context';
import type { Settings } from '../types/settings';
import { verifyAccessJwt } from './access';
import { countWrongToken, refuseWhileThrottled } from './auth-throttle';
import { roleOf } from './roles';

const READS = new Set(['GET', 'HEAD']);

export function adminAuth() {
  return createMiddleware<HonoEnv>(async function adminAuth(c, next) {
    const operator = await identify(c);
    if (operator.role === 'viewer' && !READS.has(c.req.method)) {
      throw new GatewayError('OPERATOR_READ_ONLY');
    }
    c.set('operator', operator);
    return next();
  });
}

/** Who is calling: the Authorization header decides when present, else Access. */
export async function identify(c: Context<HonoEnv>): Promise<Operator> {
  const settings = c.get('settings');
  if (settings.OPERATOR_API === 'binding') {
    throw new GatewayError('ADMIN_DISABLED', {
      message: 'The operator API is served only through the console (OPERATOR_API=binding)',
    });
  }
  if (!settings.ADMIN_TOKEN && !settings.ACCESS_TEAM_DOMAIN)
    throw new GatewayError('ADMIN_DISABLED');
  const authorization = c.req.header('authorization');
  if (authorization !== undefined || !settings.ACCESS_TEAM_DOMAIN) {
    await checkAdminToken(c, settings, authorization ?? '');
    return { actor: 'admin-token', role: 'admin', via: 'admin-token' };
  }
  return accessOperator(c, settings, settings.ACCESS_TEAM_DOMAIN);
}

async function accessOperator(c: Context<HonoEnv>, settings: Settings, teamOrigin: string) {
  const header = c.req.header('cf-access-jwt-assertion');
  const jwt = header ?? getCookie(c, 'CF_Authorization');
  if (!jwt) {
    // Signed out. Behind Access that never reaches here (Access signs the person in
    // first); `npm start`'s local Access on loopback is signed in to at its /login.
    throw new GatewayError(
      'ACCESS_TOKEN_INVALID',
      settings.ACCESS_LOCAL_ISSUER ? { details: { sign_in: `${teamOrigin}/login` } } : {},
    );
  }
  const identity = await verifyAccessJwt(jwt, { teamOrigin, audiences: settings.ACCESS_AUD });
  // The cookie rides along on any request a browser makes, and behind Access the header
  // does too (Access adds it to every request it lets through, cookie-signed ones
  // included): a change that came from another site's page is refused either way. With
  // the cookie alone it must name the gateway's own origin; with the header, a browser's
  // sign of another site (Origin, Sec-Fetch-Site) refuses it, and a client that sends
  // neither (automation with an Access service token) is let through.
  if (!READS.has(c.req.method) && (header ? fromAnotherSite(c) : !sameOrigin(c))) {
    throw new GatewayError('OPERATOR_NO_ROLE', { message: 'Cross-site operator change refused' });
  }
  const role = roleOf(identity, settings.ACCESS_ROLES);
  if (!role) {
    log.warn('admin.access_no_role', { request_id: c.get('requestId'), actor: identity.email });
    throw new GatewayError('OPERATOR_NO_ROLE');
  }
  return { actor: identity.email, role, via: 'access' } satisfies Operator;
}

function fromAnotherSite(c: Context<HonoEnv>): boolean {
  const origin = c.req.header('origin');
  if (origin) return origin !== new URL(c.req.url).origin;
  const site = c.req.header('sec-fetch-site');
  return site !== undefined && site !== 'same-origin' && site !== 'none';
}

function sameOrigin(c: Context<HonoEnv>): boolean {
  const origin = c.req.header('origin');
  if (origin) return origin === new URL(c.req.url).origin;
  return c.req.header('sec-fetch-site') === 'same-origin';
}

async function checkAdminToken(c: Context<HonoEnv>, settings: Settings, authorization: string) {
  // Before the comparison: a throttled network gets the same answer, right token or not.
  await refuseWhileThrottled(c);
  const expected = settings.ADMIN_TOKEN;
  const presented = /^Bearer\s+(\S+)$/i.exec(authorization)?.[1] ?? '';
  if (expected && (await sameSecret(presented, expected))) return;
  await countWrongToken(c);
  throw new GatewayError('ADMIN_UNAUTHORIZED');
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
