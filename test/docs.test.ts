/** The error catalog in docs/ERRORS.md matches the code, row for row. */
import { describe, expect, it } from 'vitest';
import errorsDoc from '../docs/ERRORS.md?raw';
import { ERRORS } from '../src/errors';

describe('docs/ERRORS.md', () => {
  it.each(Object.entries(ERRORS))(
    'documents %s with its code and status',
    (name, { code, status }) => {
      expect(errorsDoc).toContain(`| ${code} | ${status} | ${name} |`);
    },
  );

  it('documents no code the gateway does not have', () => {
    const documented = [...errorsDoc.matchAll(/^\| (\d{5}) \|/gm)].map((m) => Number(m[1]));
    expect(documented.sort()).toEqual(
      Object.values(ERRORS)
        .map((e) => e.code)
        .sort(),
    );
  });
});
