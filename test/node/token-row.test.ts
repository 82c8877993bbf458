/** The operator CLI's `token list` line (`npm run admin -- token list TENANT`). */
import { describe, expect, it } from 'vitest';
import { type TokenListItem, tokenRow } from '../../scripts/admin/token-row';

const now = Date.parse('2026-11-27T12:00:00Z');
const base: TokenListItem = {
  id: 'tok_AAAAAAAAAAAAAAAA',
  prefix: 'apgw_abcd',
  last4: 'wxyz',
  name: 'backend',
  scopes: ['read-only'],
  expires_at: null,
  limits: null,
  ancestor_id: null,
  successor_id: null,
  rotated_by: null,
  rotated_at: null,
};

describe('tokenRow', () => {
  it('says when a token was revoked, in place of its expiry', () => {
    const row = tokenRow(
      { ...base, expires_at: '2026-11-27T13:00:00.000Z', revoked_at: '2026-11-27T11:00:00.000Z' },
      now,
    );
    expect(row).toBe(
      'tok_AAAAAAAAAAAAAAAA  apgw_abcd…wxyz  backend  [read-only]  revoked 2026-11-27T11:00:00.000Z',
    );
  });

  it('tells an expired token from one that will expire', () => {
    expect(tokenRow({ ...base, expires_at: '2026-11-27T11:59:59.000Z' }, now)).toContain(
      '[read-only]  expired 2026-11-27T11:59:59.000Z',
    );
    expect(tokenRow({ ...base, expires_at: '2026-11-27T12:00:01.000Z' }, now)).toContain(
      '[read-only]  expires 2026-11-27T12:00:01.000Z',
    );
    expect(tokenRow(base, now)).toBe(
      'tok_AAAAAAAAAAAAAAAA  apgw_abcd…wxyz  backend  [read-only]  expires never',
    );
  });

  it('keeps own limits and the rotation line after the standing', () => {
    const row = tokenRow(
      {
        ...base,
        limits: { policies: [], quota: { daily: 5 } },
        successor_id: 'tok_BBBBBBBBBBBBBBBB',
        rotated_by: 'admin-token',
        rotated_at: '2026-11-27T10:00:00.000Z',
        revoked_at: '2026-11-27T11:00:00.000Z',
      },
      now,
    );
    expect(row).toBe(
      'tok_AAAAAAAAAAAAAAAA  apgw_abcd…wxyz  backend  [read-only]  revoked 2026-11-27T11:00:00.000Z' +
        '  own limits {"policies":[],"quota":{"daily":5}}  rotated into tok_BBBBBBBBBBBBBBBB by admin-token at 2026-11-27T10:00:00.000Z',
    );
  });
});
