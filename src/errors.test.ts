import { describe, expect, it } from 'vitest';
import { GatewayError } from './errors';

describe('GatewayError', () => {
  it('captures no stack (it is an answer, not a bug) and leaves other errors their stacks', () => {
    const before = (Error as ErrorConstructor & { stackTraceLimit: number }).stackTraceLimit;
    const err = new GatewayError('NOT_FOUND', { message: 'No route for GET /nowhere' });
    expect(err.stack ?? '').not.toMatch(/\n\s+at /);
    expect(err.message).toBe('No route for GET /nowhere');
    expect(err.name).toBe('GatewayError');
    expect([err.code, err.status]).toEqual([40400, 404]);
    expect((Error as ErrorConstructor & { stackTraceLimit: number }).stackTraceLimit).toBe(before);
    expect(new Error('a bug').stack).toMatch(/\n\s+at /);
  });
});
