import { describe, expect, it } from 'vitest';
import {
  generateToken,
  hashToken,
  isWellFormedToken,
  presentedTokenHash,
  randomBase62,
} from './token';

describe('gateway tokens', () => {
  it('look like apgw_ and 36 base62 characters, and pass their own checksum', () => {
    for (let i = 0; i < 50; i++) {
      const token = generateToken();
      expect(token).toMatch(/^apgw_[0-9A-Za-z]{36}$/);
      expect(isWellFormedToken(token)).toBe(true);
    }
  });

  it('fail the checksum when any one character changes', () => {
    const token = generateToken();
    for (let i = 'apgw_'.length; i < token.length; i++) {
      const changed = token.slice(0, i) + (token[i] === 'a' ? 'b' : 'a') + token.slice(i + 1);
      expect(isWellFormedToken(changed), `position ${i}`).toBe(false);
    }
  });

  it('refuse other shapes without looking them up', () => {
    const token = generateToken();
    for (const bad of [
      '',
      'apgw_',
      token.slice(0, -1),
      `${token}x`,
      token.replace('apgw_', 'apgx_'),
      ` ${token}`,
    ]) {
      expect(isWellFormedToken(bad), JSON.stringify(bad)).toBe(false);
    }
  });

  it('hash to a stable SHA-256, hex', async () => {
    expect(await hashToken('abc')).toBe(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });

  it('give a presented token its lookup hash, the same on every call, and refuse a malformed one', async () => {
    const token = generateToken();
    const hash = await hashToken(token);
    expect(await presentedTokenHash(token)).toBe(hash);
    expect(await presentedTokenHash(token)).toBe(hash);
    expect(await presentedTokenHash(token.slice(0, -1))).toBeNull();
    expect(
      await presentedTokenHash(`${token.slice(0, -1)}${token.endsWith('a') ? 'b' : 'a'}`),
    ).toBeNull();
  });

  it('keep each presented token apart from the others, past the memory bound', async () => {
    const tokens = Array.from({ length: 1100 }, () => generateToken());
    for (const token of tokens) await presentedTokenHash(token);
    for (const token of [tokens[0], tokens[550], tokens[1099]]) {
      if (token) expect(await presentedTokenHash(token)).toBe(await hashToken(token));
    }
  });

  it('draw random base62 of the asked length', () => {
    const sample = randomBase62(2000);
    expect(sample).toMatch(/^[0-9A-Za-z]{2000}$/);
    // Every character of the alphabet shows up in a sample this size.
    expect(new Set(sample).size).toBe(62);
  });
});
