import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { type KeyRing, keyRing } from './crypto';
import {
  checkPresentedToken,
  generateToken,
  hashToken,
  randomBase62,
  tokenTagKid,
  withChecksum,
} from './token';

const K1 = `k1:${'A'.repeat(43)}=`;
const K2 = `k2:${'B'.repeat(43)}=`;
let ring: KeyRing;
let rotated: KeyRing;
let other: KeyRing;

beforeAll(async () => {
  ring = await keyRing(K1);
  rotated = await keyRing(`${K2},${K1}`);
  other = await keyRing(K2);
});

const legacyToken = () => withChecksum(`apgw_${randomBase62(30)}`);
const oneCharChanged = (token: string, i: number) =>
  token.slice(0, i) + (token[i] === 'a' ? 'b' : 'a') + token.slice(i + 1);

describe('gateway tokens', () => {
  it('look like apgw_ and 52 base62 characters, and carry the tag of the current key', async () => {
    for (let i = 0; i < 20; i++) {
      const { token, kid } = await generateToken(rotated);
      expect(token).toMatch(/^apgw_[0-9A-Za-z]{52}$/);
      expect(kid).toBe('k2');
      expect(await tokenTagKid(rotated, token)).toBe('k2');
    }
  });

  it('fail their tag when any one character changes', async () => {
    const { token } = await generateToken(ring);
    for (let i = 'apgw_'.length; i < token.length; i++) {
      expect(await tokenTagKid(ring, oneCharChanged(token, i)), `position ${i}`).toBeNull();
    }
  });

  it('are refused under a ring without the key that tagged them, accepted while it stays', async () => {
    const { token } = await generateToken(ring);
    expect(await tokenTagKid(other, token)).toBeNull();
    // Rotation: the new key first, the old one still in the ring.
    expect(await tokenTagKid(rotated, token)).toBe('k1');
  });

  it('refuse any made-up string that is not a token this ring tagged (property)', async () => {
    const body = fc.stringMatching(/^[0-9A-Za-z]{52}$/).map((s) => `apgw_${s}`);
    await fc.assert(
      fc.asyncProperty(fc.oneof(body, fc.string()), async (s) => {
        expect(await tokenTagKid(ring, s)).toBeNull();
      }),
      { numRuns: 500 },
    );
  });

  it('tell a well-formed legacy token by its checksum', async () => {
    const token = legacyToken();
    expect(token).toMatch(/^apgw_[0-9A-Za-z]{36}$/);
    expect(await tokenTagKid(ring, token)).toBe('legacy');
    for (let i = 'apgw_'.length; i < token.length; i++) {
      expect(await tokenTagKid(ring, oneCharChanged(token, i)), `position ${i}`).toBeNull();
    }
  });

  it('refuse other shapes without looking them up', async () => {
    const { token } = await generateToken(ring);
    for (const bad of [
      '',
      'apgw_',
      token.slice(0, -1),
      `${token}x`,
      token.replace('apgw_', 'apgx_'),
      ` ${token}`,
    ]) {
      expect(await tokenTagKid(ring, bad), JSON.stringify(bad)).toBeNull();
    }
  });

  it('hash to a stable SHA-256, hex', async () => {
    expect(await hashToken('abc')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });

  it('give a presented token its lookup hash and format, the same on every call', async () => {
    const { token } = await generateToken(ring);
    const hash = await hashToken(token);
    expect(await checkPresentedToken(ring, token)).toEqual({ hash, format: 'tagged' });
    expect(await checkPresentedToken(ring, token)).toEqual({ hash, format: 'tagged' });
    expect(await checkPresentedToken(ring, token.slice(0, -1))).toBeNull();
    expect(await checkPresentedToken(ring, oneCharChanged(token, token.length - 1))).toBeNull();
    const legacy = legacyToken();
    expect(await checkPresentedToken(ring, legacy)).toEqual({
      hash: await hashToken(legacy),
      format: 'legacy',
    });
  });

  it('keep each presented token apart from the others, past the memory bound', async () => {
    const tokens = await Promise.all(
      Array.from({ length: 1100 }, async () => (await generateToken(ring)).token),
    );
    for (const token of tokens) await checkPresentedToken(ring, token);
    for (const token of [tokens[0], tokens[550], tokens[1099]]) {
      if (token) {
        expect((await checkPresentedToken(ring, token))?.hash).toBe(await hashToken(token));
      }
    }
  });

  it('draw random base62 of the asked length', () => {
    const sample = randomBase62(2000);
    expect(sample).toMatch(/^[0-9A-Za-z]{2000}$/);
    // Every character of the alphabet shows up in a sample this size.
    expect(new Set(sample).size).toBe(62);
  });
});
