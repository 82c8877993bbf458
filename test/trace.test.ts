/**
 * W3C Trace Context (docs/RESILIENCE.md, "Traces"): a caller's traceparent is
 * continued to the platform and back, or a trace is started; the trace id is
 * in the request log line.
 */
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  asTenant,
  createTenant,
  gateway,
  requestId,
  type TestTenant,
  upstreamSaw,
} from './helpers';

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

  it('drops a tracestate that is not a valid W3C list, and passes a valid one on', async () => {
    const parent = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;
    for (const bad of [
      'evil=<script>,x=1;y=2 "quoted"',
      'Upper=1',
      'a=1,a=2',
      Array.from({ length: 33 }, (_, i) => `k${i}=v`).join(','),
    ]) {
      const { upstream } = await traced({ traceparent: parent, tracestate: bad });
      expect(upstream.tracestate, bad).toBeUndefined();
      // The trace itself is continued: only the state is dropped.
      expect(TRACEPARENT.exec(upstream.traceparent ?? '')?.[1]).toBe(CALLER_TRACE);
    }
    const { upstream } = await traced({ traceparent: parent, tracestate: 'rojo=00f0, congo=t61' });
    expect(upstream.tracestate).toBe('rojo=00f0,congo=t61');
  });

  it('passes the trace on to the session event stream too', async () => {
    const id = requestId('trace-ws');
    const res = await gateway('/session/ws/no-such-session', {
      headers: {
        upgrade: 'websocket',
        authorization: `Bearer ${tenant.token}`,
        'x-request-id': id,
        traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`,
      },
    });
    expect(res.status).toBe(101);
    const ws = res.webSocket;
    const closed = new Promise<number>((resolve) =>
      ws?.addEventListener('close', (e) => resolve(e.code)),
    );
    ws?.accept();
    // The platform opens the stream, then closes it: no such session.
    expect(await closed).toBe(4404);
    const [seen] = await upstreamSaw(id);
    expect(TRACEPARENT.exec(seen?.headers.traceparent ?? '')?.[1]).toBe(CALLER_TRACE);
  });
});
