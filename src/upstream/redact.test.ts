import { describe, expect, it } from 'vitest';
import { utf8 } from '../bytes';
import { maskApiKeys } from './redact';

const masked = (value: unknown) =>
  JSON.parse(new TextDecoder().decode(maskApiKeys(utf8(JSON.stringify(value)))));

describe('maskApiKeys', () => {
  it('keeps the first 3 and last 4 characters of every api_key string', () => {
    const body = {
      code: 0,
      msg: 'Success',
      data: { data: [{ id: 1, name: 'a', api_key: 'sk-emu-0123456789abcdef' }] },
    };
    expect(masked(body).data.data[0]).toEqual({ id: 1, name: 'a', api_key: 'sk-…cdef' });
  });

  it('hides short keys entirely and leaves empty strings and other fields alone', () => {
    expect(masked({ a: { api_key: 'short' }, b: { api_key: '' }, c: 'x' })).toEqual({
      a: { api_key: '…' },
      b: { api_key: '' },
      c: 'x',
    });
  });
});
