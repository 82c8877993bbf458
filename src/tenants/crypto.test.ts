import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors';
import { fromBase64Url, keyRing, open, seal, sealedKid, toBase64Url } from './crypto';

const key = (fill: number) => `${btoa(String.fromCharCode(...new Uint8Array(32).fill(fill)))}`;
const K1 = `k1:${key(1)}`;
const K2 = `k2:${key(2)}`;

describe('sealed platform keys', () => {
  it('open to the plaintext under the key that sealed them', async () => {
    const ring = await keyRing(K1);
    const sealed = await seal(ring, 'sk-secret-platform-key', 'ten_a');
    expect(sealed).toMatch(/^v1\.k1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain('secret');
    expect(await open(ring, sealed, 'ten_a')).toBe('sk-secret-platform-key');
  });

  it('use a fresh IV each time', async () => {
    const ring = await keyRing(K1);
    expect(await seal(ring, 'same', 'ten_a')).not.toBe(await seal(ring, 'same', 'ten_a'));
  });

  it('are bound to their tenant: a value copied to another tenant does not open', async () => {
    const ring = await keyRing(K1);
    const sealed = await seal(ring, 'sk-secret', 'ten_a');
    // AES-GCM's authentication fails: WebCrypto's OperationError, not a bug's TypeError.
    await expect(open(ring, sealed, 'ten_b')).rejects.toMatchObject({ name: 'OperationError' });
  });

  it('do not open once tampered with', async () => {
    const ring = await keyRing(K1);
    const sealed = await seal(ring, 'sk-secret', 'ten_a');
    const parts = sealed.split('.');
    const ct = fromBase64Url(parts[3] ?? '');
    ct[0] = (ct[0] ?? 0) ^ 1;
    await expect(
      open(ring, [...parts.slice(0, 3), toBase64Url(ct)].join('.'), 'ten_a'),
    ).rejects.toMatchObject({ name: 'OperationError' });
  });

  it('survive key rotation: the first key seals, every key opens', async () => {
    const old = await seal(await keyRing(K1), 'sk-old', 'ten_a');
    const rotated = await keyRing(`${K2},${K1}`);
    expect(await open(rotated, old, 'ten_a')).toBe('sk-old');
    const fresh = await seal(rotated, 'sk-new', 'ten_a');
    expect(sealedKid(fresh)).toBe('k2');
    expect(sealedKid(old)).toBe('k1');
  });

  it('name the missing key id, never the value, when it is gone', async () => {
    const old = await seal(await keyRing(K1), 'sk-old', 'ten_a');
    const error = await open(await keyRing(K2), old, 'ten_a').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GatewayError);
    expect(String(error)).toContain('"k1"');
    expect(String(error)).not.toContain('sk-old');
  });

  it('refuse a malformed key setting', async () => {
    await expect(keyRing('k1:tooshort')).rejects.toBeInstanceOf(GatewayError);
  });

  it('base64url round-trips every byte value', () => {
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect(fromBase64Url(toBase64Url(bytes))).toEqual(bytes);
    expect(toBase64Url(bytes)).not.toMatch(/[+/=]/);
  });
});
