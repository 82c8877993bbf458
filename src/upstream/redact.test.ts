import { describe, expect, it } from 'vitest';
import { maskApiKeys } from './redact';

describe('maskApiKeys', () => {
  it('keeps the first 3 and last 4 characters of every api_key string', () => {
    const text = JSON.stringify({
      code: 0,
      msg: 'Success',
      data: { data: [{ id: 1, name: 'a', api_key: 'sk-emu-0123456789abcdef' }] },
    });
    const masked = JSON.parse(maskApiKeys(text));
    expect(masked.data.data[0]).toEqual({ id: 1, name: 'a', api_key: 'sk-…cdef' });
  });

  it('hides short keys entirely and leaves empty strings and other fields alone', () => {
    const masked = JSON.parse(
      maskApiKeys(JSON.stringify({ a: { api_key: 'short' }, b: { api_key: '' }, c: 'x' })),
    );
    expect(masked).toEqual({ a: { api_key: '…' }, b: { api_key: '' }, c: 'x' });
  });
});
