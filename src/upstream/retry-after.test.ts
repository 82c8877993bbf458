import { describe, expect, it } from 'vitest';
import { retryAfterSeconds } from './retry-after';

describe('Retry-After', () => {
  const now = Date.parse('2026-11-25T06:00:00Z');
  it('reads seconds and HTTP dates', () => {
    expect(retryAfterSeconds('5', now)).toBe(5);
    expect(retryAfterSeconds(' 12 ', now)).toBe(12);
    expect(retryAfterSeconds('Wed, 25 Nov 2026 06:00:30 GMT', now)).toBe(30);
  });
  it('waits at least a second, and reads a long pause as it is (the hold is capped elsewhere)', () => {
    expect(retryAfterSeconds('0', now)).toBe(1);
    expect(retryAfterSeconds('Wed, 25 Nov 2026 05:00:00 GMT', now)).toBe(1);
    expect(retryAfterSeconds('86400', now)).toBe(86_400);
  });
  it('null when absent or unreadable', () => {
    expect(retryAfterSeconds(null, now)).toBeNull();
    expect(retryAfterSeconds('soon', now)).toBeNull();
    expect(retryAfterSeconds('-3', now)).toBeNull();
  });
});
