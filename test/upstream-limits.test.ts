/**
 * Upstream bodies are read as a stream with their bytes counted: an answer
 * over 8 MiB is refused (50206) as soon as it gets there, whatever it declares
 * and however it is encoded, and the deadline covers the whole body.
 */
import { describe, expect, it } from 'vitest';
import { ERRORS } from '../src/errors';
import { asTenant, createTenant, injectFault, requestId } from './helpers';

const MiB = 1024 * 1024;

async function faulted(fault: Record<string, unknown>) {
  const t = await createTenant();
  const id = requestId('upstream-limit');
  await injectFault({ request_id: id, ...fault });
  const started = Date.now();
  const { res, body } = await asTenant(t, '/agent/lists', { headers: { 'x-request-id': id } });
  return { status: res.status, code: body.code, ms: Date.now() - started, body };
}

describe('upstream byte limit and deadline', () => {
  it('refuses a 9 MiB body sent without a Content-Length', async () => {
    const r = await faulted({ kind: 'large_body', bytes: 9 * MiB });
    expect(r).toMatchObject({ status: 502, code: ERRORS.UPSTREAM_TOO_LARGE.code });
  });

  it('refuses a body whose Content-Length says it is over the limit, before reading it', async () => {
    const r = await faulted({ kind: 'large_body', bytes: 64 * MiB, content_length: true });
    expect(r).toMatchObject({ status: 502, code: ERRORS.UPSTREAM_TOO_LARGE.code });
  });

  it('counts bytes, not characters: 22 MB of three-byte characters is over 8 MiB', async () => {
    const r = await faulted({ kind: 'large_body', bytes: 22_000_000, char: '€' });
    expect(r).toMatchObject({ status: 502, code: ERRORS.UPSTREAM_TOO_LARGE.code });
  });

  it('never inflates a compressed body past the limit: a 1 GiB gzip bomb is refused quickly', async () => {
    const r = await faulted({ kind: 'gzip_bomb', bytes: 1024 * MiB });
    expect(r).toMatchObject({ status: 502, code: ERRORS.UPSTREAM_TOO_LARGE.code });
    // Inflating the whole GiB took seconds and GBs of memory; stopping at 8 MiB takes well under the deadline.
    expect(r.ms).toBeLessThan(2000);
  });

  it('passes a body just under the limit', async () => {
    const r = await faulted({ kind: 'large_body', bytes: 8 * MiB - 1024 });
    expect(r.status).toBe(200);
    expect(r.body.data.blob.length).toBeGreaterThan(8 * MiB - 2048);
  });

  it('keeps the deadline running until the last byte: a body that trickles past it is a 504', async () => {
    // UPSTREAM_TIMEOUT_MS is 2000 in the tests; the headers come at once, the body over 4 s.
    const r = await faulted({ kind: 'slow_body', delay_ms: 4000 });
    expect(r).toMatchObject({ status: 504, code: ERRORS.UPSTREAM_TIMEOUT.code });
    expect(r.ms).toBeLessThan(3500);
  });

  it('keeps the deadline running until the last byte of a body of declared length too', async () => {
    const r = await faulted({ kind: 'slow_body', delay_ms: 4000, content_length: true });
    expect(r).toMatchObject({ status: 504, code: ERRORS.UPSTREAM_TIMEOUT.code });
    expect(r.ms).toBeLessThan(3500);
  });

  it('turns an upstream redirect into a 502 envelope', async () => {
    const r = await faulted({ kind: 'redirect', status: 307 });
    expect(r).toMatchObject({ status: 502, code: ERRORS.UPSTREAM_HTTP_ERROR.code });
    expect(r.body.data.upstream_status).toBe(307);
  });
});
