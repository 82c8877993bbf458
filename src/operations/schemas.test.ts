import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nameField } from './schemas';

describe('nameField', () => {
  const field = nameField('name', 64);
  /** Characters that change how a name is shown: controls and format characters. */
  const hidden = /[\p{Cc}\p{Cf}]/u;

  it('accepts exactly the names without control or format characters (property)', () => {
    const name = fc.string({ unit: 'grapheme-composite', minLength: 1, maxLength: 40 });
    fc.assert(
      fc.property(
        fc.oneof(name, fc.string({ unit: 'binary', minLength: 1, maxLength: 40 })),
        (n) => {
          // Length counts UTF-16 code units, as zod's does.
          const expected = !hidden.test(n) && n.length >= 1 && n.length <= 64;
          expect(field.safeParse(n).success, JSON.stringify(n)).toBe(expected);
        },
      ),
      { numRuns: 5000 },
    );
  });

  it.each(['\u202E', '\u200B', '\u2066', '\uFEFF', '\u00AD', '\u001b', '\u0007'])(
    'refuses U+%s inside a name',
    (c) => {
      expect(field.safeParse(`acme${c}corp`).success).toBe(false);
    },
  );

  it('accepts names in any script, with emoji', () => {
    for (const n of ['Acme GmbH', 'Ärzte & Co', '株式会社', 'مرحبا', 'team 🚀']) {
      expect(field.safeParse(n).success, n).toBe(true);
    }
  });
});
