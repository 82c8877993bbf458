/**
 * SHA-256 and HMAC-SHA-256 of text, in hex: token lookup keys (tenants/token.ts),
 * platform key fingerprints, read-cache keys, idempotency fingerprints and
 * quota alert signatures; and FNV-1a, a fast spread of names over shards.
 */

/** 32-bit FNV-1a of a text's UTF-16 code units: which shard a name goes to. */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
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

/** Two hex digits per byte value, made once per isolate. */
const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));

/** Bytes `from` to `to` of `bytes` (all of them by default), in hex. */
export function toHex(bytes: Uint8Array, from = 0, to = bytes.length): string {
  let out = '';
  for (let i = from; i < to; i++) out += HEX[bytes[i] ?? 0];
  return out;
}
