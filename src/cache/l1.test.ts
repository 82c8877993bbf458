import { describe, expect, it } from 'vitest';
import { ByteLru, L1_MAX_ENTRY_BYTES } from './l1';

const entry = (bytes: number, storedAt = 0) => ({ body: new Uint8Array(bytes), storedAt });

describe('ByteLru', () => {
  it('never holds more bytes than its bound, dropping the least recently used', () => {
    const lru = new ByteLru(10_000);
    for (let i = 0; i < 50; i++) {
      lru.set(`k${i}`, entry(1000), 'o');
      expect(lru.bytes).toBeLessThanOrEqual(10_000);
    }
    expect(lru.get('k0')).toBeUndefined();
    expect(lru.get('k49')).toBeDefined();
    expect(lru.size).toBeLessThanOrEqual(10);
  });

  it('keeps what is read: a read makes an entry the most recently used', () => {
    const lru = new ByteLru(3500);
    lru.set('a', entry(1000), 'o');
    lru.set('b', entry(1000), 'o');
    lru.set('c', entry(1000), 'o');
    lru.get('a');
    lru.set('d', entry(1000), 'o');
    expect(lru.get('a')).toBeDefined();
    expect(lru.get('b')).toBeUndefined();
  });

  it('leaves out entries over the entry bound', () => {
    const lru = new ByteLru(10 * L1_MAX_ENTRY_BYTES);
    lru.set('big', entry(L1_MAX_ENTRY_BYTES + 1), 'o');
    expect(lru.get('big')).toBeUndefined();
    expect(lru.bytes).toBe(0);
  });

  it('replaces an entry without counting it twice, and shrinks on resize', () => {
    const lru = new ByteLru(100_000);
    lru.set('a', entry(1000), 'o');
    const once = lru.bytes;
    lru.set('a', entry(1000, 5), 'o');
    expect(lru.bytes).toBe(once);
    expect(lru.get('a')?.storedAt).toBe(5);
    lru.set('b', entry(1000), 'o');
    lru.resize(once);
    expect(lru.get('a')).toBeUndefined();
    expect(lru.get('b')).toBeDefined();
  });

  it('an owner flooding distinct keys evicts only its own entries once past its share', () => {
    const lru = new ByteLru(10_000);
    lru.set('a1', entry(1000), 'A');
    lru.set('a2', entry(1000), 'A');
    for (let i = 0; i < 200; i++) {
      lru.set(`b${i}`, entry(500), 'B');
      expect(lru.bytes).toBeLessThanOrEqual(10_000);
    }
    expect(lru.get('a1')).toBeDefined();
    expect(lru.get('a2')).toBeDefined();
    // B holds about its even share (half of the bound, two owners), its newest entries.
    expect(lru.bytesOf('B')).toBeLessThanOrEqual(10_000 - lru.bytesOf('A'));
    expect(lru.get('b199')).toBeDefined();
    expect(lru.get('b0')).toBeUndefined();
  });

  it('an owner under its share takes room from the least recently used, whoever owns it', () => {
    const lru = new ByteLru(4400);
    for (let i = 0; i < 4; i++) lru.set(`b${i}`, entry(1000), 'B');
    lru.set('a', entry(1000), 'A');
    // A (1 entry, under half) pushed out B's least recently used entry.
    expect(lru.get('a')).toBeDefined();
    expect(lru.get('b0')).toBeUndefined();
    expect(lru.get('b3')).toBeDefined();
  });
});
