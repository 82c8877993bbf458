/**
 * Each way the platform can fail, produced for real by the emulator over
 * HTTP, becomes its own envelope; a platform envelope passes through.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ERRORS } from '../src/errors';
import {
  createTenant,
  envelope,
  gatewayWith,
  injectFault,
  requestId,
  type TestTenant,
  upstreamSaw,
} from './helpers';

let tenant: TestTenant;
beforeAll(async () => {
  tenant = await createTenant();
});

async function callWithFault(
  fault: Record<string, unknown>,
  settings: Record<string, string> = {},
  path = '/agent/lists',
) {
  const id = requestId('fault');
  await injectFault({ request_id: id, ...fault });
  const started = Date.now();
  const res = await gatewayWith(settings, path, {
    headers: { authorization: `Bearer ${tenant.token}`, 'x-request-id': id },
  });
  return { res, id, body: await envelope(res), elapsed: Date.now() - started };
}

describe('upstream failures', () => {
  // The last column: platform calls made. A read that got no answer, or a 503 without
  // Retry-After, is tried once more (docs/RESILIENCE.md); every fault here fails twice.
  const cases = [
    ['HTTP 500 from the platform', { kind: 'status', status: 500 }, 'UPSTREAM_HTTP_ERROR', 1],
    ['HTTP 503 from the platform', { kind: 'status', status: 503 }, 'UPSTREAM_HTTP_ERROR', 2],
    [
      'HTTP 401: the tenant key is rejected',
      { kind: 'status', status: 401 },
      'UPSTREAM_AUTH_REJECTED',
      1,
    ],
    ['an HTML page', { kind: 'html' }, 'UPSTREAM_NOT_JSON', 1],
    ['truncated JSON', { kind: 'invalid_json' }, 'UPSTREAM_INVALID_JSON', 1],
    ['JSON without an envelope', { kind: 'bad_envelope' }, 'UPSTREAM_BAD_ENVELOPE', 1],
    ['a reset connection', { kind: 'reset' }, 'UPSTREAM_UNREACHABLE', 2],
  ] as const;

  it.each(cases)('%s', async (_, fault, kind, calls) => {
    const { res, body, id } = await callWithFault({ ...fault, times: 2 });
    expect(res.status).toBe(ERRORS[kind].status);
    expect(body.code).toBe(ERRORS[kind].code);
    expect(body.data.request_id).toBe(id);
    expect(res.headers.get('x-request-id')).toBe(id);
    expect(JSON.stringify(body)).not.toMatch(/oops|stack|at .*\.ts/);
    expect(await upstreamSaw(id)).toHaveLength(calls);
  });

  it('a platform that does not answer in time: 504 after UPSTREAM_TIMEOUT_MS', async () => {
    const { res, body, elapsed } = await callWithFault(
      { kind: 'hang', delay_ms: 5000 },
      { UPSTREAM_TIMEOUT_MS: '300' },
    );
    expect(res.status).toBe(504);
    expect(body.code).toBe(ERRORS.UPSTREAM_TIMEOUT.code);
    expect(body.msg).toContain('300 ms');
    expect(elapsed).toBeLessThan(4000);
  });

  it('a platform that cannot be reached at all: 502', async () => {
    const res = await gatewayWith({ PLATFORM_BASE_URL: 'http://127.0.0.1:1' }, '/agent/lists', {
      headers: { authorization: `Bearer ${tenant.token}` },
    });
    const body = await envelope(res);
    expect(res.status).toBe(502);
    expect(body.code).toBe(ERRORS.UPSTREAM_UNREACHABLE.code);
  });

  it("passes the platform's own non-zero code and msg through", async () => {
    const { res, body } = await callWithFault({ kind: 'platform_error' });
    expect(res.status).toBe(200);
    expect(body).toEqual({ code: 20001, msg: 'platform says no', data: null });
  });

  it('passes a platform "not found" envelope through unchanged', async () => {
    const id = requestId();
    const res = await gatewayWith({}, '/team/info/00000000-0000-4000-8000-000000000000', {
      headers: { authorization: tenant.token, 'x-request-id': id },
    });
    const body = await envelope(res);
    expect(body.code).toBe(10404);
    expect(body.msg).toMatch(/not found/);
  });
});
