import { describe, expect, it } from 'vitest';
import { clientNetwork } from './preauth';

describe('clientNetwork', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002::1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['2001:DB8:0:0:ffff::', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['unknown', 'unknown'],
  ])('%s is counted as %s', (ip, network) => {
    expect(clientNetwork(ip)).toBe(network);
  });

  it('puts every address of one /64 in the same network', () => {
    const nets = new Set(
      ['2001:db8:a:b::1', '2001:db8:a:b:ffff:ffff:ffff:ffff', '2001:db8:a:b:1::'].map(
        clientNetwork,
      ),
    );
    expect(nets.size).toBe(1);
  });
});
