import { describe, expect, it } from 'vitest';
import { Holds } from './holds';

describe('platform pauses (holds)', () => {
  it('a key hold applies to that key only, until its end', () => {
    const h = new Holds();
    h.holdKey('fp-a', 5000, 0);
    expect(h.heldAt('fp-a', 4999)).toEqual({ scope: 'key', until: 5000 });
    expect(h.heldAt('fp-b', 10)).toBeNull();
    expect(h.heldAt('fp-a', 5000)).toBeNull();
  });

  it('a hold on everything applies to every key; the longer hold wins', () => {
    const h = new Holds();
    h.holdAll(3000);
    h.holdKey('fp-a', 8000, 0);
    expect(h.heldAt('fp-b', 100)).toEqual({ scope: 'all', until: 3000 });
    expect(h.heldAt('fp-a', 100)).toEqual({ scope: 'key', until: 8000 });
    expect(h.heldAt('fp-b', 3000)).toBeNull();
  });

  it('a shorter pause never cuts a longer one short', () => {
    const h = new Holds();
    h.holdKey('fp-a', 9000, 0);
    h.holdKey('fp-a', 2000, 0);
    h.holdAll(7000);
    h.holdAll(1000);
    expect(h.heldAt('fp-a', 8000)?.until).toBe(9000);
    expect(h.heldAt('fp-b', 6000)?.until).toBe(7000);
  });

  it('keeps at most 10,000 keys, dropping expired ones first', () => {
    const h = new Holds();
    h.holdKey('old', 10, 0);
    for (let i = 0; i < 10_000; i++) h.holdKey(`k${i}`, 60_000, 100);
    expect(h.heldAt('old', 5)).toBeNull();
    expect(h.heldAt('k0', 200)).not.toBeNull();
    h.holdKey('one-more', 60_000, 200);
    expect(h.heldAt('one-more', 300)).not.toBeNull();
    expect(h.heldAt('k0', 300)).toBeNull();
  });
});
