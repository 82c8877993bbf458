import { describe, expect, it } from 'vitest';
import { validTracestate } from './tracestate';

describe('validTracestate', () => {
  it.each([
    ['vendor=abc', 'vendor=abc'],
    ['rojo=00f067aa0ba902b7,congo=t61rcWkgMzE', 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE'],
    // Spaces and tabs around members, and empty members, are list syntax, not content.
    [' a=1 ,\t, b=2\t', 'a=1,b=2'],
    ['tenant1@system=x', 'tenant1@system=x'],
    ['k=value with inner spaces', 'k=value with inner spaces'],
    ['k=<tag>', 'k=<tag>'],
    // A space after a value is the list's optional white space, not the value's.
    ['k=trailing ', 'k=trailing'],
  ])('keeps %j', (header, kept) => {
    expect(validTracestate(header)).toBe(kept);
  });

  it.each([
    ['evil=<script>,x=1;y=2 "quoted"', 'a value with "="'],
    ['Vendor=abc', 'an upper-case key'],
    ['1abc=x', 'a simple key starting with a digit'],
    ['k=', 'an empty value'],
    ['k= ', 'a value of spaces only'],
    ['=x', 'no key'],
    ['k', 'no "="'],
    ['a=1,a=2', 'a repeated key'],
    ['k=caf\u00e9', 'a value outside printable ASCII'],
    ['t@toolongsystemid=1', 'a system id over 14 characters'],
    [Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(','), '33 members'],
    [`k=${'v'.repeat(600)}`, 'over 512 characters'],
    ['', 'nothing'],
    [' , ', 'only empty members'],
  ])('drops %j (%s)', (header) => {
    expect(validTracestate(header)).toBeUndefined();
  });

  it('keeps 32 members', () => {
    const header = Array.from({ length: 32 }, (_, i) => `k${i}=v`).join(',');
    expect(validTracestate(header)).toBe(header);
  });
});
