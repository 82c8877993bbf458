import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ALL_SCOPES, expandScopes, PRESETS } from './scopes';

describe('expandScopes', () => {
  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'])(
    'treats %s as an unknown name, not a property of an object',
    (name) => {
      expect(expandScopes([name])).toEqual({ scopes: [], unknown: [name] });
    },
  );

  it('for any strings, grants only known scopes and names every other string unknown', () => {
    const known = [...PRESETS.keys(), ...ALL_SCOPES];
    const name = fc.oneof(fc.string(), fc.constantFrom(...known, '__proto__', 'constructor'));
    fc.assert(
      fc.property(fc.array(name, { maxLength: 8 }), (names) => {
        const { scopes, unknown } = expandScopes(names);
        for (const s of scopes) expect(ALL_SCOPES).toContain(s);
        expect(unknown).toEqual(names.filter((n) => !known.includes(n)));
      }),
      { numRuns: 2000 },
    );
  });
});
