import { describe, expect, it } from 'vitest';
import { patternProblem } from './pattern-check';

describe('declared patterns', () => {
  it.each([
    '(a+)+$',
    '^(a*)*$',
    '(a|a)*',
    '^(a|ab|b)*c$',
    '\\d+\\d+x',
    '^(\\w+\\s?)*$',
    '^(a?b?)*$',
    '(.*a){12}',
    '^([a-z]+-?)*$',
    '^(\\w|\\d)+$',
    '^[^@]+@[^@]+\\.[^@]+$',
    '(x+x+)+y',
    '^(a{1,20}){1,20}$',
    // Nested or repeated counts small enough to write out are still ambiguous (review of issue 42).
    '^(a{1,16}){1,16}$',
    '^([a-z]{1,16}){1,16}$',
    '^(\\w{1,8}\\.?){1,16}$',
    '^(a|aa){16}$',
  ])('refuses %s: it can backtrack catastrophically', (pattern) => {
    expect(patternProblem(pattern)).toMatch(/^can backtrack catastrophically/);
  });

  it.each([
    '^[a-z0-9]+(-[a-z0-9]+)*$',
    '^\\d{3}-\\d{4}$',
    '^(\\d{1,3}\\.){3}\\d{1,3}$',
    '^[A-Z]{2}[0-9]{6}$',
    'abc',
    '^https?://[^/]+(/[^/]*)*$',
    '^[a-zA-Z0-9._-]{1,255}$',
    '^[^@.\\s]+(\\.[^@.\\s]+)*@[^@.\\s]+(\\.[^@.\\s]+)+$',
    '^(a|b|c)+$',
    '^\\S+$',
    '^[A-Za-z0-9+/]*={0,2}$',
    '^[a-z]+ [a-z]+$',
    '^(red|green|blue)$',
    '[]',
    '^(?:ab)*c$',
    '^(?<year>\\d{4})-(?<month>\\d{2})$',
    // Two loops that run side by side but cannot both go on: linear.
    '^(\\d+\\.)+\\d+$',
    '^(a{1,3}b){3}$',
  ])('takes %s', (pattern) => {
    expect(patternProblem(pattern)).toBeNull();
  });

  it('refuses backreferences and lookarounds, saying why', () => {
    expect(patternProblem('^(a)\\1$')).toMatch(/backreference/);
    expect(patternProblem('^(?<x>a)\\k<x>$')).toMatch(/backreference/);
    expect(patternProblem('^(?=a)a$')).toMatch(/lookahead or lookbehind/);
    expect(patternProblem('^(?<!a)b$')).toMatch(/lookahead or lookbehind/);
  });

  it('what it takes finishes on a long text that fails (one it refuses would not, in years)', () => {
    const text = `${'a'.repeat(1024)}!`;
    for (const taken of ['^[a-z0-9]+(-[a-z0-9]+)*$', '^(a|b|c)+$', '^(a|ab)*c$']) {
      expect(patternProblem(taken)).toBeNull();
      expect(new RegExp(taken).test(text)).toBe(false);
    }
    // Side-by-side loops: one way through leaves the other's loop, so this is linear too.
    expect(/^(\d+\.)+\d+$/.test(`1.${'2'.repeat(100_000)}x`)).toBe(false);
  });

  it('refuses a pattern too long to check', () => {
    expect(patternProblem('[a-z]'.repeat(1001))).toMatch(/too long to check/);
  });
});
