import { describe, expect, it } from 'vitest';
import { ByteLru, L1_MAX_ENTRY_BYTES } from './l1';

const entry = (bytes: number, storedAt = 0) => ({ body: new Uint8Array(bytes), storedAt });

describe('ByteLru', () => {
  it('never holds more bytes than its bound, dropping the least recently used', () => {
    const lru = new ByteLru(10_000);
    for (let i = 0; i < 50; i++) {
      lru.set(`k${i}`, entry(1000));
      expect(lru.bytes).toBeLessThanOrEqual(10_000);
    }
    expect(lru.get('k0')).toBeUndefined();
    expect(lru.get('k49')).toBeDefined();
    expect(lru.size).toBeLessThanOrEqual(10);
  });

  it('keeps what is read: a read makes an entry the most recently used', () => {
    const lru = new ByteLru(3500);
    lru.set('a', entry(1000));
    lru.set('b', entry(1000));
    lru.set('c', entry(1000));
    lru.get('a');
    lru.set('d', entry(1000));
    expect(lru.get('a')).toBeDefined();
    expect(lru.get('b')).toBeUndefined();
  });

  it('leaves out entries over the entry bound', () => {
    const lru = new ByteLru(10 * L1_MAX_ENTRY_BYTES);
    lru.set('big', entry(L1_MAX_ENTRY_BYTES + 1));
    expect(lru.get('big')).toBeUndefined();
    expect(lru.bytes).toBe(0);
  });

  it('replaces an entry without counting it twice, and shrinks on resize', () => {
    const lru = new ByteLru(100_000);
    lru.set('a', entry(1000));
    const once = lru.bytes;
    lru.set('a', entry(1000, 5));
    expect(lru.bytes).toBe(once);
    expect(lru.get('a')?.storedAt).toBe(5);
    lru.set('b', entry(1000));
    lru.resize(once);
    expect(lru.get('a')).toBeUndefined();
    expect(lru.get('b')).toBeDefined();
  });
});
