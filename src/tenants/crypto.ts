/**
 * Platform keys are sealed with AES-256-GCM (WebCrypto) before they reach KV.
 *
 * KEY_ENCRYPTION_KEY holds one or more keys, `kid:base64` separated by commas;
 * the first seals, all of them open, so the key can be rotated: put the new
 * key first, run `POST /admin/maintenance/reencrypt`, then drop the old one.
 * A sealed value is `v1.<kid>.<iv>.<ciphertext>` (base64url), bound to its
 * tenant id as additional data, so a value copied to another tenant won't open.
 */
import { decodeUtf8 } from '../bytes';
import { GatewayError } from '../errors';

export interface KeyRing {
  currentKid: string;
  /**
   * The current key's AES-GCM key (seals) and HMAC keys (browser tokens, gateway token tags,
   * OAuth codes, refresh tokens and authorization requests).
   */
  current: { seal: CryptoKey; sign: CryptoKey; tag: CryptoKey; oauth: CryptoKey };
  keys: Map<string, CryptoKey>;
  /** HMAC-SHA-256 keys derived from the same material (HKDF), for browser tokens. */
  signing: Map<string, CryptoKey>;
  /** HMAC-SHA-256 keys derived likewise, for the tags of gateway tokens (tenants/token.ts). */
  tagging: Map<string, CryptoKey>;
  /** HMAC-SHA-256 keys derived likewise, for OAuth's own secrets (tenants/oauth-secret.ts). */
  oauth: Map<string, CryptoKey>;
}

const rings = new Map<string, Promise<KeyRing>>();

/** Parses and imports KEY_ENCRYPTION_KEY once per isolate. */
export function keyRing(setting: string): Promise<KeyRing> {
  let ring = rings.get(setting);
  if (!ring) {
    ring = importRing(setting);
    rings.set(setting, ring);
  }
  return ring;
}

async function importRing(setting: string): Promise<KeyRing> {
  const entries = setting.split(',').map((part) => part.trim().split(':'));
  const keys = new Map<string, CryptoKey>();
  const signing = new Map<string, CryptoKey>();
  const tagging = new Map<string, CryptoKey>();
  const oauth = new Map<string, CryptoKey>();
  let current: (KeyRing['current'] & { kid: string }) | undefined;
  for (const [kid, material] of entries) {
    const raw = material ? fromBase64Url(material) : new Uint8Array();
    if (!kid || !/^[A-Za-z0-9_-]{1,32}$/.test(kid) || raw.length !== 32) {
      throw new GatewayError('MISCONFIGURED', {
        message:
          'Gateway is misconfigured: KEY_ENCRYPTION_KEY must be kid:base64 of 32 bytes, ' +
          'comma-separated',
      });
    }
    const sealKey = await crypto.subtle.importKey('raw', raw, 'AES-GCM', false, [
      'encrypt',
      'decrypt',
    ]);
    // Separate keys for signing and tagging, so no key is ever used for two purposes.
    const hkdf = await crypto.subtle.importKey('raw', raw, 'HKDF', false, ['deriveKey']);
    const signKey = await hmacKey(hkdf, 'apgw browser token v1');
    const tagKey = await hmacKey(hkdf, 'apgw token tag v1');
    const oauthKey = await hmacKey(hkdf, 'apgw oauth v1');
    keys.set(kid, sealKey);
    signing.set(kid, signKey);
    tagging.set(kid, tagKey);
    oauth.set(kid, oauthKey);
    // The first entry seals, signs and tags.
    current ??= { kid, seal: sealKey, sign: signKey, tag: tagKey, oauth: oauthKey };
  }
  if (!current) throw new GatewayError('MISCONFIGURED', { message: 'KEY_ENCRYPTION_KEY is empty' });
  const { kid, ...currentKeys } = current;
  return { currentKid: kid, current: currentKeys, keys, signing, tagging, oauth };
}

/** An HMAC-SHA-256 key derived from the ring key's material for one purpose (`info`). */
function hmacKey(material: CryptoKey, info: string): Promise<CryptoKey> {
  return crypto.subtle.deriveKey(
    {
      name: 'HKDF',
      hash: 'SHA-256',
      salt: new Uint8Array(),
      info: new TextEncoder().encode(info),
    },
    material,
    { name: 'HMAC', hash: 'SHA-256', length: 256 },
    false,
    ['sign', 'verify'],
  );
}

export async function seal(ring: KeyRing, plaintext: string, boundTo: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = await crypto.subtle.encrypt(
    { name: 'AES-GCM', iv, additionalData: new TextEncoder().encode(boundTo) },
    ring.current.seal,
    new TextEncoder().encode(plaintext),
  );
  return ['v1', ring.currentKid, toBase64Url(iv), toBase64Url(new Uint8Array(ct))].join('.');
}

export async function open(ring: KeyRing, sealed: string, boundTo: string): Promise<string> {
  const [version, kid, iv, ct] = sealed.split('.');
  const key = kid ? ring.keys.get(kid) : undefined;
  if (version !== 'v1' || !key || !iv || !ct) {
    throw new GatewayError('MISCONFIGURED', {
      message: `Gateway is misconfigured: no encryption key "${kid}" in KEY_ENCRYPTION_KEY`,
    });
  }
  const plain = await crypto.subtle.decrypt(
    { name: 'AES-GCM', iv: fromBase64Url(iv), additionalData: new TextEncoder().encode(boundTo) },
    key,
    fromBase64Url(ct),
  );
  return decodeUtf8(new Uint8Array(plain));
}

/** The key id a sealed value was sealed under. */
export const sealedKid = (sealed: string) => sealed.split('.')[1];

/** Whether a stored value is sealed (`v1.<kid>.…`) rather than plain. */
export const isSealed = (value: string) => /^v1\.[A-Za-z0-9_-]{1,32}\./.test(value);

export function toBase64Url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

export function fromBase64Url(text: string): Uint8Array<ArrayBuffer> {
  try {
    const b64 = text.replace(/-/g, '+').replace(/_/g, '/');
    return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  } catch {
    return new Uint8Array();
  }
}
