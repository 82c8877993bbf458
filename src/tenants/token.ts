/**
 * Gateway token format (docs/SECURITY.md, "Gateway tokens"):
 *
 * - **tagged** (issued now): `apgw_` + 30 base62 random characters (~178 bits)
 *   + 22 base62 characters of a keyed tag, HMAC-SHA-256 of the rest under a
 *   key derived from KEY_ENCRYPTION_KEY (128 bits kept). Only the gateway can
 *   make a tag, so a made-up token is refused without any I/O, and a
 *   well-tagged token the store does not know can only be a leaked, deleted one.
 * - **legacy** (issued before tags): `apgw_` + 30 random + 6 base62 of CRC-32.
 *   Anyone can compute a CRC, so these cost a KV read when unknown; they are
 *   accepted until LEGACY_TOKENS_UNTIL, the migration window.
 *
 * The prefix lets secret scanners spot leaked tokens.
 */

import { sha256Hex } from '../hash';
import type { KeyRing } from './crypto';
import { Memo } from './memo';

export const TOKEN_PREFIX = 'apgw_';
const RANDOM_CHARS = 30;
const TAG_CHARS = 22;
const CHECKSUM_CHARS = 6;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const TAGGED_SHAPE = new RegExp(`^${TOKEN_PREFIX}[0-9A-Za-z]{${RANDOM_CHARS + TAG_CHARS}}$`);
const LEGACY_SHAPE = new RegExp(`^${TOKEN_PREFIX}[0-9A-Za-z]{${RANDOM_CHARS + CHECKSUM_CHARS}}$`);

export type TokenFormat = 'tagged' | 'legacy';

/** A new token, tagged under the ring's current key; `kid` names that key. */
export async function generateToken(ring: KeyRing): Promise<{ token: string; kid: string }> {
  const body = TOKEN_PREFIX + randomBase62(RANDOM_CHARS);
  return { token: body + (await tag(ring.current.tag, body)), kid: ring.currentKid };
}

/**
 * The key id whose tag the token carries, 'legacy' for a well-formed legacy
 * token, or null when it is neither: no lookup needed to refuse it.
 */
export async function tokenTagKid(ring: KeyRing, token: string): Promise<string | null> {
  if (TAGGED_SHAPE.test(token)) {
    const cut = token.length - TAG_CHARS;
    const [body, presented] = [token.slice(0, cut), token.slice(cut)];
    // A ring holds a key or two: trying each costs microseconds and no I/O.
    for (const [kid, key] of ring.tagging) {
      if ((await tag(key, body)) === presented) return kid;
    }
    return null;
  }
  if (LEGACY_SHAPE.test(token)) {
    const cut = token.length - CHECKSUM_CHARS;
    return withChecksum(token.slice(0, cut)) === token ? 'legacy' : null;
  }
  return null;
}

/** A presented token that passed its format check: its KV lookup key, and its format. */
export interface PresentedToken {
  hash: string;
  format: TokenFormat;
}

/**
 * Tokens presented lately that passed their check under a ring, at most 1024
 * per ring (the oldest go first). A token's hash never changes, so they never
 * expire; a ring without the key that tagged a token gets a memo of its own.
 */
const presentedUnder = new WeakMap<KeyRing, Memo<PresentedToken>>();

/**
 * The KV lookup key of a presented token, or null when it is forged or
 * malformed (no KV read needed to refuse it). A hot token's check and hash are
 * kept in this isolate's memory, so its requests skip the HMAC and the SHA-256;
 * only this process's memory ever holds the token.
 */
export async function checkPresentedToken(
  ring: KeyRing,
  token: string,
): Promise<PresentedToken | null> {
  let presented = presentedUnder.get(ring);
  if (!presented) {
    presented = new Memo<PresentedToken>(1024);
    presentedUnder.set(ring, presented);
  }
  const known = presented.get(token);
  if (known !== undefined) return known;
  const kid = await tokenTagKid(ring, token);
  if (kid === null) return null;
  const checked: PresentedToken = {
    hash: await hashToken(token),
    format: kid === 'legacy' ? 'legacy' : 'tagged',
  };
  presented.set(token, checked, Number.POSITIVE_INFINITY);
  return checked;
}

/** The KV lookup key of a token: its SHA-256, hex. */
export const hashToken = sha256Hex;

export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      // 248 = 4 * 62: rejecting the top bytes keeps every character equally likely.
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/** A legacy token's body with its CRC-32 check characters appended. */
export function withChecksum(body: string): string {
  return body + base62(crc32(body), CHECKSUM_CHARS);
}

/** The first 128 bits of HMAC-SHA-256(body), in 22 base62 characters. */
export async function tag(key: CryptoKey, body: string): Promise<string> {
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(body)));
  let n = 0n;
  for (const byte of mac.subarray(0, 16)) n = (n << 8n) | BigInt(byte);
  let out = '';
  for (let i = 0; i < TAG_CHARS; i++) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out;
}

function base62(value: number, chars: number): string {
  let n = value;
  let out = '';
  for (let i = 0; i < chars; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

const CRC_TABLE = Uint32Array.from({ length: 256 }, (_, i) => {
  let c = i;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

/** CRC-32 of an ASCII string (tokens are base62), one character a byte. */
function crc32(ascii: string): number {
  let crc = 0xffffffff;
  for (let i = 0; i < ascii.length; i++) {
    // The index is masked to 0..255, so the entry always exists.
    crc = (CRC_TABLE.at((crc ^ ascii.charCodeAt(i)) & 0xff) ?? 0) ^ (crc >>> 8);
  }
  return (crc ^ 0xffffffff) >>> 0;
}
