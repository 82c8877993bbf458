import { describe, expect, it } from 'vitest';
import { humanDuration } from './duration';

describe('humanDuration', () => {
  it.each([
    [0, '0 s'],
    [3, '3 s'],
    [119, '119 s'],
    [120, '2 min'],
    [1799, '30 min'],
    [3569, '59 min'],
    [3570, '1 h'],
    [3600, '1 h'],
    // The walk's own figures (issue 42): a quota's reset and a pause's retry.
    [6919, '1 h 55 min'],
    [86_399, '24 h'],
    [172_799, '48 h'],
    [179_273, '2 days 2 h'],
    [30 * 86_400, '30 days'],
  ])('says %d s as people say it (%j), at most two units', (seconds, said) => {
    expect(humanDuration(seconds)).toBe(said);
  });

  it('never says a negative or fractional time', () => {
    expect(humanDuration(-5)).toBe('0 s');
    expect(humanDuration(59.6)).toBe('60 s');
  });
});
