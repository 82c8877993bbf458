/**
 * Authentication. A tenant token may arrive as `Authorization: Bearer <token>`,
 * as a bare `Authorization: <token>` (what the platform's own clients send),
 * or as `x-api-key: <token>`. A browser token (`apgb_…`) comes the same way,
 * or, on the WebSocket route, in `Sec-WebSocket-Protocol` or `?access_token=`,
 * since browsers cannot set headers on a WebSocket.
 *
 * @example app.get('/team/lists', tenantAuth(), handler)
 */
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { GatewayError } from '../errors';
import { BROWSER_TOKEN_PREFIX, verifyBrowserToken } from '../tenants/browser-token';
import { keyRing } from '../tenants/crypto';
import { hasScope, requiredScope } from '../tenants/scopes';
import { memoizedStores, type Stores } from '../tenants/stores';
import { checkPresentedToken, TOKEN_PREFIX } from '../tenants/token';
import type { HonoEnv } from '../types/context';
import type { PlatformOperation } from '../types/operations';
import type { Tenant, TokenRecord } from '../types/tenants';
import { bearerChallenge, resourceOf } from './bearer';
import { countAgainstClient, isThrottled, throttled } from './preauth';

interface Authenticated {
  tenant: Tenant;
  record: TokenRecord;
  /** Browser tokens only: their own rate-limit partition. */
  partition?: string;
}

export function tenantAuth(opts: { websocket?: boolean } = {}) {
  const websocket = opts.websocket ?? false;
  return createMiddleware<HonoEnv>(async function tenantAuth(c, next) {
    const token = presentedToken(c, websocket);
    if (!token) {
      throw new GatewayError('MISSING_TOKEN', {
        message: 'Missing gateway token: send Authorization: Bearer <token>',
      });
    }
    const stores = await memoizedStores(c.env, c.get('settings'));
    const found = token.startsWith(BROWSER_TOKEN_PREFIX)
      ? await browserToken(c, stores, token)
      : await tenantToken(c, stores, token);
    if (found.tenant.status !== 'active') throw new GatewayError('TENANT_DISABLED');

    // An OAuth access token works only at the resource it was granted for (RFC 8707).
    const resource = found.record.resource;
    if (resource !== undefined && resource !== resourceOf(c)) {
      throw new GatewayError('INVALID_TOKEN', {
        message: `This OAuth token is for ${resource}, not this resource (RFC 8707)`,
      });
    }
    // A browser may only call from an origin its tenant allows, or from the
    // gateway's own pages (/docs, /portal), which are same-origin, or an OAuth grant's
    // token from the origin of the app it was granted to.
    const origin = c.req.header('origin');
    if (origin && !originAllowed(c, origin, found.tenant, found.record)) {
      throw new GatewayError('ORIGIN_NOT_ALLOWED', {
        message: `Origin ${origin} is not allowed for this tenant`,
      });
    }
    c.set('tenant', found.tenant);
    c.set('token', found.record);
    if (found.partition) c.set('partition', found.partition);
    await next();
  });
}

/** Whether a browser at `origin` may call with this token of this tenant. */
export function originAllowed(
  c: Context<HonoEnv>,
  origin: string,
  tenant: Pick<Tenant, 'cors_origins'>,
  record: Pick<TokenRecord, 'grant'>,
): boolean {
  return (
    isOwnOrigin(c, origin) ||
    (tenant.cors_origins ?? []).includes(origin) ||
    record.grant?.origin === origin
  );
}

/** The gateway's own origin: its pages' requests carry it on POSTs. */
export function isOwnOrigin(c: Context<HonoEnv>, origin: string): boolean {
  return origin === new URL(c.req.url).origin;
}

async function tenantToken(
  c: Context<HonoEnv>,
  stores: Stores,
  token: string,
): Promise<Authenticated> {
  const settings = c.get('settings');
  // Shape and tag first: a forged token never costs a KV read. It answers as an
  // unknown token does, so the answer says nothing about which check failed.
  const checked = await checkPresentedToken(await keyRing(settings.KEY_ENCRYPTION_KEY), token);
  const legacy = checked?.format === 'legacy';
  if (!checked || (legacy && Date.now() >= settings.LEGACY_TOKENS_UNTIL)) {
    throw new GatewayError('INVALID_TOKEN');
  }
  const ref = { hash: checked.hash };
  // Anyone can make a legacy-format token: from a client that keeps presenting
  // unknown ones, only those this isolate already knows are looked up.
  if (legacy && isThrottled(c, 'legacy-token') && !stores.tokens.remembered(ref)) {
    throw throttled('legacy-token');
  }
  const entry = await stores.tokens.find(ref);
  if (!entry) {
    if (legacy) await countAgainstClient(c, 'legacy-token');
    throw new GatewayError('INVALID_TOKEN');
  }
  const { record } = entry;
  c.set('principal', { tenantId: record.tenant_id, tokenId: record.id });
  if (record.revoked_at) throw new GatewayError('TOKEN_REVOKED');
  if (record.expires_at && Date.parse(record.expires_at) <= Date.now()) {
    throw new GatewayError('TOKEN_EXPIRED');
  }
  const tenant = await stores.tenants.get(record.tenant_id);
  if (!tenant) throw new GatewayError('INVALID_TOKEN');
  return { tenant, record };
}

async function browserToken(
  c: Context<HonoEnv>,
  stores: Stores,
  token: string,
): Promise<Authenticated> {
  const ring = await keyRing(c.get('settings').KEY_ENCRYPTION_KEY);
  const verified = await verifyBrowserToken(ring, token);
  if (!verified.ok) {
    if (verified.reason === 'expired') {
      throw new GatewayError('TOKEN_EXPIRED', { message: 'Browser token has expired' });
    }
    throw new GatewayError('INVALID_TOKEN', { message: 'Invalid browser token' });
  }
  const claims = verified.claims;
  c.set('principal', { tenantId: claims.ten, tokenId: claims.tok });
  const origin = c.req.header('origin');
  if (origin !== claims.org) {
    throw new GatewayError('ORIGIN_NOT_ALLOWED', {
      message: origin
        ? 'This browser token is bound to another origin'
        : 'A browser token must come with its Origin header',
    });
  }
  // The minting token must still exist and be in date (revocation deletes it), even
  // where the TenantGuard is off or fails open; the guard makes revocation instant.
  const minter = await stores.tokens.find({ tenantId: claims.ten, tokenId: claims.tok });
  if (!minter) {
    throw new GatewayError('TOKEN_REVOKED', {
      message: 'The token that minted this browser token was revoked',
    });
  }
  const minterEnds = minter.record.expires_at;
  if (minterEnds && Date.parse(minterEnds) <= Date.now()) throw new GatewayError('TOKEN_EXPIRED');
  const tenant = await stores.tenants.get(claims.ten);
  if (!tenant) throw new GatewayError('INVALID_TOKEN', { message: 'Invalid browser token' });
  // The minting token's id: the TenantGuard refuses this token once that one is revoked.
  const record: TokenRecord = {
    id: claims.tok,
    tenant_id: claims.ten,
    name: 'browser',
    prefix: BROWSER_TOKEN_PREFIX,
    last4: token.slice(-4),
    scopes: claims.scp,
    created_at: '',
    expires_at: new Date(claims.exp * 1000).toISOString(),
  };
  return { tenant, record, partition: claims.prt };
}

/**
 * Who a request to no route was made by, for its tenant's usage history: set when it
 * presents a valid gateway token (tag checked first, so a forged one costs no I/O; a
 * legacy-format one is not looked up) or a valid browser token. Never refuses.
 */
export async function notePrincipal(c: Context<HonoEnv>): Promise<void> {
  const token = presentedToken(c, false);
  if (!token) return;
  try {
    const ring = await keyRing(c.get('settings').KEY_ENCRYPTION_KEY);
    if (token.startsWith(BROWSER_TOKEN_PREFIX)) {
      const verified = await verifyBrowserToken(ring, token);
      if (verified.ok)
        c.set('principal', { tenantId: verified.claims.ten, tokenId: verified.claims.tok });
      return;
    }
    const checked = await checkPresentedToken(ring, token);
    if (checked?.format !== 'tagged') return;
    const stores = await memoizedStores(c.env, c.get('settings'));
    const entry = await stores.tokens.find({ hash: checked.hash });
    if (entry) c.set('principal', { tenantId: entry.record.tenant_id, tokenId: entry.record.id });
  } catch {
    // Counting is best effort: the answer is the 404 either way.
  }
}

/** A token without the scope an operation needs gets a 403 that names the scope. */
export function requireScope(op: Pick<PlatformOperation, 'group' | 'method'> | string) {
  const needed = typeof op === 'string' ? op : requiredScope(op);
  return createMiddleware<HonoEnv>(async function requireScope(c, next) {
    if (!hasScope(c.get('token').scopes, needed)) {
      // RFC 6750 3.1: what to ask for (an OAuth client can ask its partner again).
      const challenge = bearerChallenge(resourceOf(c), {
        error: 'insufficient_scope',
        scope: needed,
      });
      throw new GatewayError('SCOPE_REQUIRED', {
        message: `This token lacks the scope ${needed}`,
        details: { scope: needed },
        headers: { 'WWW-Authenticate': challenge },
      });
    }
    await next();
  });
}

/**
 * Refuses a browser token with `refusal()`, before the limiter counts anything: what
 * only the token it was minted from may do (mint, rotate).
 */
export function notFromBrowser(refusal: () => GatewayError) {
  return createMiddleware<HonoEnv>(async function notFromBrowser(c, next) {
    if (c.get('token').prefix === BROWSER_TOKEN_PREFIX) throw refusal();
    await next();
  });
}

/** The subprotocol a browser WebSocket client names to say "the token follows". */
export const WS_PROTOCOL = 'apgw';

export function presentedToken(c: Context<HonoEnv>, websocket: boolean): string | null {
  const authorization = c.req.header('authorization')?.trim();
  // "Bearer" with nothing after it (an API client's empty token box) carries no token.
  if (authorization && !/^Bearer$/i.test(authorization)) {
    return /^Bearer\s+(\S+)$/i.exec(authorization)?.[1] ?? authorization;
  }
  const apiKey = c.req.header('x-api-key')?.trim();
  if (apiKey) return apiKey;
  if (!websocket) return null;
  const offered = (c.req.header('sec-websocket-protocol') ?? '').split(',').map((p) => p.trim());
  const fromProtocol = offered.find(
    (p) => p.startsWith(BROWSER_TOKEN_PREFIX) || p.startsWith(TOKEN_PREFIX),
  );
  if (fromProtocol) return fromProtocol;
  // URLs end up in logs and histories: only short-lived browser tokens ride there, unless
  // the operator lets the platform's own client send a gateway token where it sends its
  // platform key (docs/BROWSER.md, "Tokens in the URL").
  const anyToken = c.get('settings').WS_QUERY_TOKENS === 'all';
  for (const name of WS_QUERY_NAMES) {
    const value = c.req.query(name)?.replace(/^Bearer\s+/i, '');
    if (!value) continue;
    if (value.startsWith(BROWSER_TOKEN_PREFIX)) return value;
    if (anyToken && name !== 'access_token') return value;
  }
  return null;
}

/** Where a WebSocket client may put its token in the URL: ours, then the platform client's. */
const WS_QUERY_NAMES = ['access_token', 'api_key', 'authorization'] as const;
