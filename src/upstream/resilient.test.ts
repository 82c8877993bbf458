import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors';
import type { UpstreamRequest } from './request';
import { DEFAULT_RESILIENCE as options } from './resilience-options.fixture';
import { breakerStates, callResilient } from './resilient';

/**
 * A write whose call ends before any byte leaves (its signal already aborted), so no
 * network is used: the platform unreachable, or, with `refusal`, the caller's upload
 * refused mid-way.
 */
function write(refusal?: GatewayError): UpstreamRequest {
  return {
    url: 'http://127.0.0.1:9/session/upload',
    init: { method: 'POST', headers: {} },
    signal: AbortSignal.abort(),
    ...(refusal ? { callerFault: () => refusal } : {}),
  };
}

async function call(upstream: string, request: UpstreamRequest, now: number): Promise<string> {
  try {
    await callResilient({
      upstream,
      keyId: 'key-1',
      request,
      idempotent: false,
      deadlineMs: 10_000,
      options,
      now: () => now,
    });
    return 'ok';
  } catch (err) {
    return err instanceof GatewayError ? err.kind : String(err);
  }
}

const tooLarge = () => new GatewayError('PAYLOAD_TOO_LARGE');

describe("an upload refused mid-way is the caller's fault: the breaker counts nothing", () => {
  it('does not close a half-open key breaker, and gives its probe back', async () => {
    const upstream = 'http://upstream.test/half-open';
    for (let i = 0; i < 5; i++)
      expect(await call(upstream, write(), 1000 + i)).toBe('UPSTREAM_UNREACHABLE');
    expect(breakerStates(1010)[upstream]).toMatchObject({ keys_open: 1 });

    // Cooled down: the refused upload takes the probe, and must give it back, not close.
    const later = 1010 + options.breaker.cooldownMs;
    expect(await call(upstream, write(tooLarge()), later)).toBe('PAYLOAD_TOO_LARGE');
    expect(breakerStates(later)[upstream]).toMatchObject({ keys_open: 0, keys_half_open: 1 });
    // The next call is the probe (not refused as one in flight); its failure opens it again.
    expect(await call(upstream, write(), later)).toBe('UPSTREAM_UNREACHABLE');
    expect(breakerStates(later)[upstream]).toMatchObject({ keys_open: 1 });
  });

  it("does not end a closed key's run of failures", async () => {
    const upstream = 'http://upstream.test/run';
    for (let i = 0; i < 4; i++) await call(upstream, write(), 1000 + i);
    expect(await call(upstream, write(tooLarge()), 1005)).toBe('PAYLOAD_TOO_LARGE');
    expect(breakerStates(1005)[upstream]).toMatchObject({ keys_open: 0 });
    await call(upstream, write(), 1006);
    expect(breakerStates(1006)[upstream]).toMatchObject({ keys_open: 1 });
  });
});
