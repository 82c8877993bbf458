/**
 * Browser tokens: short-lived, signed, bound to one origin and to a subset of
 * the minting token's scopes. `apgb_<payload>.<signature>`, both base64url;
 * the payload is JSON, the signature HMAC-SHA-256 under a key derived from
 * KEY_ENCRYPTION_KEY (its `kid` names which). Nothing is stored: the gateway
 * verifies the signature, the expiry and the Origin header on every request,
 * and the TenantGuard still checks the minting token (revoke it, and its
 * browser tokens stop too).
 */
import * as z from 'zod';
import { decodeUtf8 } from '../bytes';
import { fromBase64Url, type KeyRing, toBase64Url } from './crypto';

export const BROWSER_TOKEN_PREFIX = 'apgb_';
/** Longest and shortest browser token lifetimes (docs/BOUNDS.md). */
export const BROWSER_TOKEN_MAX_TTL_S = 3600;
export const BROWSER_TOKEN_MIN_TTL_S = 5;
/** Longest browser token accepted, before any parsing (docs/BOUNDS.md). */
const MAX_LENGTH = 2048;

const claimsSchema = z.object({
  /** Tenant id. */
  ten: z.string(),
  /** Id of the tenant token that minted it (its revocation ends this token). */
  tok: z.string(),
  /** The only origin it may be used from. */
  org: z.string(),
  scp: z.array(z.string()),
  /** Expiry, seconds since the epoch. */
  exp: z.number(),
  /** Rate-limit partition of this token. */
  prt: z.string().regex(/^[A-Za-z0-9]{1,32}$/),
  kid: z.string(),
});

export type BrowserClaims = z.infer<typeof claimsSchema>;

export async function signBrowserToken(
  ring: KeyRing,
  claims: Omit<BrowserClaims, 'kid'>,
): Promise<string> {
  const payload = toBase64Url(
    new TextEncoder().encode(JSON.stringify({ ...claims, kid: ring.currentKid })),
  );
  const signature = await crypto.subtle.sign(
    'HMAC',
    ring.current.sign,
    new TextEncoder().encode(payload),
  );
  return `${BROWSER_TOKEN_PREFIX}${payload}.${toBase64Url(new Uint8Array(signature))}`;
}

export type Verified =
  | { ok: true; claims: BrowserClaims }
  | { ok: false; reason: 'malformed' | 'forged' | 'expired' };

/** Checks shape, signature (constant time, via WebCrypto) and expiry. */
export async function verifyBrowserToken(
  ring: KeyRing,
  token: string,
  nowMs = Date.now(),
): Promise<Verified> {
  if (token.length > MAX_LENGTH || !token.startsWith(BROWSER_TOKEN_PREFIX))
    return { ok: false, reason: 'malformed' };
  const [payload, signature, extra] = token.slice(BROWSER_TOKEN_PREFIX.length).split('.');
  if (!payload || !signature || extra !== undefined) return { ok: false, reason: 'malformed' };
  // One spelling per token: no padding, no other alphabet, no stray trailing bits.
  if (!isCanonicalBase64Url(payload) || !isCanonicalBase64Url(signature)) {
    return { ok: false, reason: 'malformed' };
  }
  let claims: BrowserClaims;
  try {
    const parsed = claimsSchema.safeParse(JSON.parse(decodeUtf8(fromBase64Url(payload))));
    if (!parsed.success) return { ok: false, reason: 'malformed' };
    claims = parsed.data;
  } catch {
    return { ok: false, reason: 'malformed' };
  }
  const key = ring.signing.get(claims.kid);
  if (
    !key ||
    !(await crypto.subtle.verify(
      'HMAC',
      key,
      fromBase64Url(signature),
      new TextEncoder().encode(payload),
    ))
  ) {
    return { ok: false, reason: 'forged' };
  }
  if (!(claims.exp * 1000 > nowMs)) return { ok: false, reason: 'expired' };
  return { ok: true, claims };
}

function isCanonicalBase64Url(part: string): boolean {
  return /^[A-Za-z0-9_-]+$/.test(part) && toBase64Url(fromBase64Url(part)) === part;
}
