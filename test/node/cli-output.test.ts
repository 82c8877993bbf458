/** The operator CLI prints operator-supplied text without obeying what is in it. */
import { describe, expect, it } from 'vitest';
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
