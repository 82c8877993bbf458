import { describe, expect, it } from 'vitest';
import { readTrace } from './trace';

const PARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

describe('readTrace', () => {
  it('starts a new trace with fresh, distinct, non-zero ids when the caller sent none', () => {
    const a = readTrace(undefined, undefined);
    const b = readTrace(undefined, undefined);
    const [, traceId, spanId, flags] = PARENT.exec(a.traceparent) ?? [];
    expect(traceId).toBe(a.traceId);
    expect(flags).toBe('01');
    expect(traceId).not.toMatch(/^0+$/);
    expect(spanId).not.toMatch(/^0+$/);
    // The span id is not a slice of the trace id (one random draw feeds both).
    expect(traceId).not.toContain(spanId);
    expect(b.traceId).not.toBe(a.traceId);
    expect(PARENT.exec(b.traceparent)?.[2]).not.toBe(spanId);
  });

  it("continues the caller's trace with a span id of its own", () => {
    const caller = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    const trace = readTrace(caller, 'vendor=x');
    const [, traceId, spanId] = PARENT.exec(trace.traceparent) ?? [];
    expect(traceId).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(spanId).not.toBe('00f067aa0ba902b7');
    expect(trace.tracestate).toBe('vendor=x');
  });
});
