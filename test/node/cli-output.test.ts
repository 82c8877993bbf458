/** The operator CLI's output: operator-supplied text is shown, never obeyed; answers read as aligned fields. */
import { describe, expect, it } from 'vitest';
import { asFields } from '../../scripts/admin/as-fields';
import { printable } from '../../scripts/admin/printable';

describe('printable', () => {
  it('shows terminal escapes and other control characters instead of sending them', () => {
    expect(printable('evil\u001b[2J\u001b]0;pwned\u0007name\u009b')).toBe(
      'evil\\x1b[2J\\x1b]0;pwned\\x07name\\x9b',
    );
  });

  it('keeps line breaks, tabs and ordinary text, accents and emoji included', () => {
    expect(printable('a\tb\nçé 🙂')).toBe('a\tb\nçé 🙂');
  });
});

describe('asFields: answers without a layout of their own', () => {
  it('prints one aligned line per field, nested objects indented, lists on one line', () => {
    const tenant = {
      id: 'ten_abc',
      name: 'Acme',
      scopes: ['teams:read', 'sessions:write'],
      cors_origins: [],
      plan: null,
      limits: { policies: [{ name: 'burst', limit: 20, window_s: 10 }], quota: { daily: 10000 } },
    };
    expect(asFields(tenant).split('\n')).toEqual([
      'id            ten_abc',
      'name          Acme',
      'scopes        teams:read, sessions:write',
      'cors_origins  (none)',
      'plan          –',
      'limits',
      '  policies',
      '    [1]',
      '      name      burst',
      '      limit     20',
      '      window_s  10',
      '  quota',
      '    daily  10000',
    ]);
  });

  it('says (empty) for an empty answer and prints a plain value as it is', () => {
    expect(asFields({})).toBe('(empty)');
    expect(asFields({ deleted: true })).toBe('deleted  true');
    expect(asFields('done')).toBe('done');
  });
});
