/**
 * W3C Trace Context (docs/RESILIENCE.md, "Traces"): a caller's traceparent is
 * continued to the platform and back, or a trace is started; the trace id is
 * in the request log line.
 */
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { asTenant, createTenant, requestId, type TestTenant, upstreamSaw } from './helpers';

let tenant: TestTenant;
beforeAll(async () => {
  tenant = await createTenant();
});
afterEach(() => vi.restoreAllMocks());

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

async function traced(headers: Record<string, string>) {
  const lines: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => lines.push(a.join(' ')));
  const id = requestId('trace');
  const { res, body } = await asTenant(tenant, '/agent/lists', {
    headers: { ...headers, 'x-request-id': id },
  });
  vi.restoreAllMocks();
  expect(body.code).toBe(0);
  const [seen] = await upstreamSaw(id);
  const line = lines
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l.request_id === id);
  return { res, upstream: seen?.headers ?? {}, line };
}

describe('trace context', () => {
  it("continues the caller's trace to the platform with a span of its own, and says so", async () => {
    const { res, upstream, line } = await traced({
      traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`,
      tracestate: 'vendor=abc',
    });
    const sent = TRACEPARENT.exec(upstream.traceparent ?? '');
    expect(sent?.[1]).toBe(CALLER_TRACE);
    expect(sent?.[2]).not.toBe(CALLER_SPAN);
    expect(sent?.[3]).toBe('01');
    expect(upstream.tracestate).toBe('vendor=abc');
    expect(res.headers.get('traceparent')).toBe(upstream.traceparent);
    expect(line?.trace_id).toBe(CALLER_TRACE);
  });

  it('starts a trace when the caller sent none', async () => {
    const { res, upstream, line } = await traced({});
    const sent = TRACEPARENT.exec(upstream.traceparent ?? '');
    expect(sent).not.toBeNull();
    expect(res.headers.get('traceparent')).toBe(upstream.traceparent);
    expect(line?.trace_id).toBe(sent?.[1]);
  });

  it('starts a new trace instead of passing on an invalid one, and drops its tracestate', async () => {
    for (const bad of [
      `ff-${CALLER_TRACE}-${CALLER_SPAN}-01`,
      `00-${'0'.repeat(32)}-${CALLER_SPAN}-01`,
      `00-${CALLER_TRACE}-${'0'.repeat(16)}-01`,
      'not a traceparent',
    ]) {
      const { upstream, line } = await traced({ traceparent: bad, tracestate: 'vendor=abc' });
      const sent = TRACEPARENT.exec(upstream.traceparent ?? '');
      expect(sent).not.toBeNull();
      expect(sent?.[1]).not.toBe(CALLER_TRACE);
      expect(upstream.tracestate).toBeUndefined();
      expect(line?.trace_id).toBe(sent?.[1]);
    }
  });
});
