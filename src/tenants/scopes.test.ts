import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ALL_SCOPES,
  expandScopes,
  grantScopes,
  hasScope,
  PRESET_NAMES,
  presetScopes,
} from './scopes';

describe('expandScopes', () => {
  it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'])(
    'treats %s as an unknown name, not a property of an object',
    (name) => {
      expect(expandScopes([name])).toEqual({ scopes: [], unknown: [name] });
    },
  );

  it('for any strings, grants only known scopes and names every other string unknown', () => {
    const known = [...PRESET_NAMES, ...ALL_SCOPES];
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

describe('presets follow groups that appear later', () => {
  const later = ['widgets'];

  it('keeps a preset by name, and drops the scopes it already gives', () => {
    expect(grantScopes(['teams:read', 'full', 'apikeys:read', 'token:rotate'])).toEqual({
      scopes: ['full', 'apikeys:read', 'token:rotate'],
      unknown: [],
    });
    expect(grantScopes(['read-only', 'teams:write', 'teams:read']).scopes).toEqual([
      'read-only',
      'teams:write',
    ]);
  });

  it('a stored preset reaches a group named only after the token was issued', () => {
    const stored = grantScopes(['full']).scopes;
    expect(hasScope(stored, 'widgets:write')).toBe(true);
    expect(hasScope(grantScopes(['read-only']).scopes, 'widgets:read')).toBe(true);
    expect(hasScope(grantScopes(['read-only']).scopes, 'widgets:write')).toBe(false);
    // A scope of a group unknown at issue time cannot be asked for by name.
    expect(grantScopes(['widgets:read']).unknown).toEqual(['widgets:read']);
    // Once its group exists, it can.
    expect(grantScopes(['widgets:read'], ['teams', ...later])).toEqual({
      scopes: ['widgets:read'],
      unknown: [],
    });
  });

  it('explicit scopes stay explicit; API keys and self-rotation never come from a preset', () => {
    const narrow = grantScopes(['teams:read', 'sessions:write']).scopes;
    expect(hasScope(narrow, 'widgets:read')).toBe(false);
    expect(hasScope(narrow, 'products:read')).toBe(false);
    for (const preset of PRESET_NAMES) {
      for (const explicit of ['apikeys:read', 'apikeys:write', 'apikeys:admin', 'token:rotate']) {
        expect(hasScope([preset], explicit), `${preset} ${explicit}`).toBe(false);
      }
    }
    expect(hasScope(['apikeys:admin'], 'apikeys:write')).toBe(true);
  });

  it('reads a list a preset was expanded into before 0.3 as that preset', () => {
    const earlier = ['apikeys', 'calls', 'teams', 'agents', 'sessions', 'browsers'];
    const oldFull = presetScopes('full', earlier);
    // Five groups read and write (apikeys is explicit-only) and usage:read.
    expect(oldFull).toHaveLength(11);
    expect(hasScope(oldFull, 'products:write')).toBe(true);
    expect(hasScope([...oldFull, 'apikeys:read'], 'widgets:read')).toBe(true);
    const oldReadOnly = presetScopes('read-only', earlier);
    expect(hasScope(oldReadOnly, 'reports:read')).toBe(true);
    expect(hasScope(oldReadOnly, 'reports:write')).toBe(false);
    // One scope short of the old list, or one more: explicit, as it was.
    expect(hasScope(oldFull.slice(1), 'products:read')).toBe(false);
    expect(hasScope([...oldFull, 'products:read'], 'reports:read')).toBe(false);
    expect(hasScope([...oldFull, 'products:read'], 'products:read')).toBe(true);
  });

  it('lists a preset out over the groups asked, for a browser token', () => {
    expect(expandScopes(['read-only'], ['teams', ...later]).scopes).toEqual([
      'teams:read',
      'usage:read',
      'widgets:read',
    ]);
  });
});
