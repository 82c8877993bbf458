import { describe, expect, it } from 'vitest';
import { MAX_RETRY_AFTER_S, retryAfterSeconds } from './retry-after';

describe('Retry-After', () => {
  const now = Date.parse('2026-11-25T06:00:00Z');
  it('reads seconds and HTTP dates', () => {
    expect(retryAfterSeconds('5', now)).toBe(5);
    expect(retryAfterSeconds(' 12 ', now)).toBe(12);
    expect(retryAfterSeconds('Wed, 25 Nov 2026 06:00:30 GMT', now)).toBe(30);
  });
  it('keeps it between 1 s and the longest pause honoured', () => {
    expect(retryAfterSeconds('0', now)).toBe(1);
    expect(retryAfterSeconds('Wed, 25 Nov 2026 05:00:00 GMT', now)).toBe(1);
    expect(retryAfterSeconds('86400', now)).toBe(MAX_RETRY_AFTER_S);
  });
  it('null when absent or unreadable', () => {
    expect(retryAfterSeconds(null, now)).toBeNull();
    expect(retryAfterSeconds('soon', now)).toBeNull();
    expect(retryAfterSeconds('-3', now)).toBeNull();
  });
});
