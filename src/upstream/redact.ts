/**
 * Platform secrets in responses (4.1's new key, 4.3's key list) are masked
 * for every token without apikeys:admin: `sk-emu-…c0de` shows which key it is
 * without handing it out.
 */
import { type Bytes, utf8 } from '../bytes';

export function maskApiKeys(body: Bytes): Bytes {
  const masked = mask(JSON.parse(new TextDecoder().decode(body)));
  return utf8(JSON.stringify(masked));
}

function maskKey(key: string): string {
  return key.length >= 12 ? `${key.slice(0, 3)}…${key.slice(-4)}` : '…';
}

function mask(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(mask);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      k === 'api_key' && typeof v === 'string' && v !== '' ? maskKey(v) : mask(v),
    ]),
  );
}
