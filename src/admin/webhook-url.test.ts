import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { webhookUrlProblem } from './webhook-url';

describe('webhook URLs', () => {
  it.each([
    'https://hooks.example.com/quota',
    'https://hooks.example.com:8443/q?x=1',
    'https://8.8.8.8/hook',
    'https://[2606:4700::1111]/hook',
  ])('accepts %s', (url) => {
    expect(webhookUrlProblem(url, false)).toBeNull();
  });

  it.each([
    ['http://hooks.example.com/q', 'https'],
    ['ftp://hooks.example.com/q', 'https'],
    ['https://user:pass@hooks.example.com/q', 'credentials'],
    ['https://user@hooks.example.com/q', 'credentials'],
    ['https://127.0.0.1/q', 'loopback'],
    ['https://127.1/q', 'loopback'],
    ['https://2130706433/q', 'loopback'],
    ['https://0x7f.0.0.1/q', 'loopback'],
    ['https://localhost/q', 'loopback'],
    ['https://api.localhost/q', 'loopback'],
    ['https://10.1.2.3/q', 'private'],
    ['https://172.16.0.1/q', 'private'],
    ['https://172.31.255.255/q', 'private'],
    ['https://192.168.1.1/q', 'private'],
    ['https://169.254.169.254/latest/meta-data', 'link-local'],
    ['https://100.64.0.1/q', 'private'],
    ['https://0.0.0.0/q', 'private'],
    ['https://[::1]/q', 'loopback'],
    ['https://[::]/q', 'loopback'],
    ['https://[fe80::1]/q', 'link-local'],
    ['https://[fd00::1]/q', 'private'],
    ['https://[::ffff:127.0.0.1]/q', 'loopback'],
    ['https://[::ffff:10.0.0.1]/q', 'private'],
    ['not a url', 'absolute'],
  ])('refuses %s', (url, why) => {
    expect(webhookUrlProblem(url, false)).toContain(
      why === 'link-local' || why === 'private' ? 'loopback, private or link-local' : why,
    );
  });

  it('lets local development use http and loopback, never credentials', () => {
    expect(webhookUrlProblem('http://127.0.0.1:8790/__emulator/webhooks/a', true)).toBeNull();
    expect(webhookUrlProblem('http://u:p@127.0.0.1/q', true)).toContain('credentials');
    expect(webhookUrlProblem('ftp://127.0.0.1/q', true)).toContain('https');
  });

  it('never throws, and whatever it accepts is https, without credentials (property)', () => {
    const url = fc.oneof(fc.string(), fc.webUrl({ withQueryParameters: true }), fc.webUrl());
    fc.assert(
      fc.property(url, (text) => {
        if (webhookUrlProblem(text, false) !== null) return;
        const parsed = new URL(text);
        expect(parsed.protocol).toBe('https:');
        expect(parsed.username + parsed.password).toBe('');
      }),
      { numRuns: 5000 },
    );
    // 5,000 generated URLs take about a second alone, several on a busy machine.
  }, 30_000);

  it('refuses every private or loopback IPv4 literal, however it is written (property)', () => {
    const octet = fc.integer({ min: 0, max: 255 });
    const privateV4 = fc.oneof(
      fc.tuple(fc.constant(10), octet, octet, octet),
      fc.tuple(fc.constant(127), octet, octet, octet),
      fc.tuple(fc.constant(192), fc.constant(168), octet, octet),
      fc.tuple(fc.constant(172), fc.integer({ min: 16, max: 31 }), octet, octet),
      fc.tuple(fc.constant(169), fc.constant(254), octet, octet),
    );
    const written = (o: number[]) => {
      const n = o.reduce((a, b) => a * 256 + b, 0);
      return fc.constantFrom(
        o.join('.'),
        String(n),
        `0x${n.toString(16)}`,
        o.map((x) => `0x${x.toString(16)}`).join('.'),
        `[::ffff:${o.join('.')}]`,
      );
    };
    fc.assert(
      fc.property(privateV4.chain(written), (host) => {
        expect(webhookUrlProblem(`https://${host}/hook`, false), host).not.toBeNull();
      }),
      { numRuns: 3000 },
    );
  });

  it('accepts public IPv4 literals (property)', () => {
    const publicFirst = fc
      .integer({ min: 1, max: 223 })
      .filter((a) => ![10, 100, 127, 169, 172, 192].includes(a));
    const octet = fc.integer({ min: 0, max: 255 });
    fc.assert(
      fc.property(fc.tuple(publicFirst, octet, octet, octet), (o) => {
        expect(webhookUrlProblem(`https://${o.join('.')}/hook`, false)).toBeNull();
      }),
    );
  });
});
