/**
 * Gateway token format: `apgw_` + 30 base62 random characters (~178 bits) +
 * 6 base62 characters of CRC-32 over the rest. The prefix lets secret
 * scanners spot leaked tokens; the checksum lets the gateway refuse a
 * mistyped or made-up token without a KV read.
 */

import { Memo } from './memo';

export const TOKEN_PREFIX = 'apgw_';
const RANDOM_CHARS = 30;
const CHECKSUM_CHARS = 6;
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const TOKEN_SHAPE = new RegExp(`^${TOKEN_PREFIX}[0-9A-Za-z]{${RANDOM_CHARS + CHECKSUM_CHARS}}$`);

export function generateToken(): string {
  const body = TOKEN_PREFIX + randomBase62(RANDOM_CHARS);
  return body + checksum(body);
}

/** True when the token has the right shape and checksum. */
export function isWellFormedToken(token: string): boolean {
  if (!TOKEN_SHAPE.test(token)) return false;
  const cut = token.length - CHECKSUM_CHARS;
  return checksum(token.slice(0, cut)) === token.slice(cut);
}

export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return toHex(new Uint8Array(digest));
}

/** HMAC-SHA-256 of `message` under `secret` (UTF-8), hex: how quota alerts are signed. */
export async function hmacSha256Hex(secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey(
    'raw',
    new TextEncoder().encode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign'],
  );
  const mac = await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(message));
  return toHex(new Uint8Array(mac));
}

/** The KV lookup key of a token: its SHA-256, hex. */
export const hashToken = sha256Hex;

/**
 * Hashes of tokens presented lately, at most 1024 per isolate (the oldest go
 * first). A token's hash never changes, so they never expire.
 */
const presentedHashes = new Memo<string>(1024);

/**
 * The KV lookup key of a presented token, or null when the token is not
 * well formed (wrong shape or checksum: no KV read needed to refuse it). A
 * hot token's hash is kept in this isolate's memory, so its requests skip the
 * checksum and the SHA-256; only this process's memory ever holds the token.
 */
export async function presentedTokenHash(token: string): Promise<string | null> {
  const known = presentedHashes.get(token);
  if (known !== undefined) return known;
  if (!isWellFormedToken(token)) return null;
  const hash = await hashToken(token);
  presentedHashes.set(token, hash, Number.POSITIVE_INFINITY);
  return hash;
}

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

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));

function toHex(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += HEX[b];
  return out;
}

function checksum(text: string): string {
  let n = crc32(text);
  let out = '';
  for (let i = 0; i < CHECKSUM_CHARS; i++) {
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
