import { describe, expect, it } from 'vitest';
import { BrokerWants } from './broker-wants';

describe('BrokerWants (the root sharing a meter among brokers)', () => {
  it('gives each broker what it wants while what is left covers every want', () => {
    const wants = new BrokerWants();
    expect(wants.share('m', 'a', 100, 1000, 0)).toBe(100);
    expect(wants.share('m', 'b', 300, 900, 0)).toBe(300);
  });

  it('shares in proportion to the wants when they exceed what is left', () => {
    const wants = new BrokerWants();
    wants.share('m', 'small', 100, 10_000, 0);
    wants.share('m', 'big', 900, 10_000, 0);
    // 400 left, wants 100 + 900: the small region gets a tenth, the big one nine tenths
    // of what is left (within half of it).
    expect(wants.share('m', 'small', 100, 400, 1)).toBe(40);
    expect(wants.share('m', 'big', 900, 400, 1)).toBe(200);
  });

  it('forgets a want after 10 s, and keeps meters apart', () => {
    const wants = new BrokerWants();
    wants.share('m', 'gone', 900, 10_000, 0);
    expect(wants.share('other', 'a', 100, 150, 10)).toBe(75);
    expect(wants.share('m', 'a', 100, 150, 10_001)).toBe(75);
  });

  it('hands over the last two units whole', () => {
    const wants = new BrokerWants();
    expect(wants.share('m', 'a', 5, 2, 0)).toBe(2);
  });
});
