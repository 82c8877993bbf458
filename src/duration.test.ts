import { describe, expect, it } from 'vitest';
import { humanDuration } from './duration';

describe('humanDuration', () => {
  it('says seconds as people say them, at most two units', () => {
    expect(humanDuration(0)).toBe('0 s');
    expect(humanDuration(3)).toBe('3 s');
    expect(humanDuration(119)).toBe('119 s');
    expect(humanDuration(120)).toBe('2 min');
    expect(humanDuration(1799)).toBe('30 min');
    expect(humanDuration(3569)).toBe('59 min');
    expect(humanDuration(3570)).toBe('1 h');
    expect(humanDuration(3600)).toBe('1 h');
    // The walk's own figures (issue 42): a quota's reset and a pause's retry.
    expect(humanDuration(6919)).toBe('1 h 55 min');
    expect(humanDuration(86_399)).toBe('24 h');
    expect(humanDuration(172_799)).toBe('48 h');
    expect(humanDuration(179_273)).toBe('2 days 2 h');
    expect(humanDuration(30 * 86_400)).toBe('30 days');
  });

  it('never says a negative or fractional time', () => {
    expect(humanDuration(-5)).toBe('0 s');
    expect(humanDuration(59.6)).toBe('60 s');
  });
});
