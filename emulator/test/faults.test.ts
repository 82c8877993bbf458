// Fault injection: every fault kind as a client sees it, how faults match
// (request id, path prefix, times), and the validation of POST /__emulator/faults.
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createEmulator } from '../app';
import { DEMO_PLATFORM_KEY } from '../seed';
import type { Fault, RecordedRequest } from '../store';
import type { Envelope } from '../types';
import { auth, type Reply, useEmulator, xKey } from './client';

const emu = useEmulator({ resetEach: true });
const demo = auth(DEMO_PLATFORM_KEY);
const MiB = 1024 * 1024;

let ridSeq = 0;
/** Registers a fault for a fresh request id; returns the id and the registered fault. */
async function fault(spec: Record<string, unknown>): Promise<{ rid: string; fault: Fault }> {
  const rid = `rid-fault-${++ridSeq}`;
  return { rid, fault: await emu.control<Fault>('POST', '/faults', { request_id: rid, ...spec }) };
}
const teams = (rid?: string, signal?: AbortSignal): Promise<Reply> =>
  emu.fetch('GET', '/team/lists', {
    headers: demo,
    ...(rid === undefined ? {} : { requestId: rid }),
    ...(signal ? { signal } : {}),
  });
const recorded = (rid: string) =>
  emu.control<RecordedRequest[]>('GET', `/requests?request_id=${rid}`);
const isSuccess = (r: Reply) =>
  r.status === 200 && (JSON.parse(r.text) as Envelope<unknown>).code === 0;

/** A GET over node:http, which neither decodes gzip nor follows redirects: the bytes on the wire. */
function wire(
  path: string,
  headers: Record<string, string>,
): Promise<{
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}> {
  return new Promise((resolve, reject) => {
    const req = request(`${emu.url}${path}`, { headers, timeout: 5000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

describe('answer faults', () => {
  it('status: the given HTTP status with an envelope whose code is that status', async () => {
    const { rid } = await fault({ kind: 'status', status: 503 });
    const r = await teams(rid);
    expect(r.status).toBe(503);
    expect(r.contentType).toMatch(/^application\/json/);
    expect(r.text).toBe('{"code":503,"msg":"emulated failure","data":null}');
  });

  it('status: 500 by default', async () => {
    const { rid, fault: f } = await fault({ kind: 'status' });
    expect(f.status).toBe(500);
    expect((await teams(rid)).status).toBe(500);
  });

  it('html: an HTML page with 200', async () => {
    const { rid } = await fault({ kind: 'html' });
    const r = await teams(rid);
    expect(r).toMatchObject({ status: 200, text: '<html>oops</html>' });
    expect(r.contentType).toMatch(/^text\/html/);
  });

  it('invalid_json: truncated JSON labelled as JSON', async () => {
    const { rid } = await fault({ kind: 'invalid_json' });
    const r = await teams(rid);
    expect(r.status).toBe(200);
    expect(r.contentType).toMatch(/^application\/json/);
    expect(() => JSON.parse(r.text)).toThrow(SyntaxError);
  });

  it('bad_envelope: JSON that is not an envelope', async () => {
    const { rid } = await fault({ kind: 'bad_envelope' });
    expect(await teams(rid)).toMatchObject({ status: 200, text: '{"hello":"world"}' });
  });

  it('platform_error: HTTP 200 with code 20001', async () => {
    const { rid } = await fault({ kind: 'platform_error' });
    const r = await teams(rid);
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text)).toEqual({ code: 20001, msg: 'platform says no', data: null });
  });

  it('redirect: a 3xx (302 by default) that fetch does not follow, with an envelope body', async () => {
    const { rid, fault: f } = await fault({ kind: 'redirect' });
    expect(f.status).toBe(302);
    const r = await teams(rid);
    expect(r.status).toBe(302);
    expect(JSON.parse(r.text)).toEqual({ code: 0, msg: 'Success', data: {} });
    const { rid: rid307 } = await fault({ kind: 'redirect', status: 307 });
    expect((await teams(rid307)).status).toBe(307);
  });

  it('redirect: sends Location when one is given', async () => {
    const { rid } = await fault({ kind: 'redirect', location: 'https://elsewhere.example/x' });
    const r = await wire('/team/lists', { ...demo, 'x-request-id': rid });
    expect(r.status).toBe(302);
    expect(r.headers.location).toBe('https://elsewhere.example/x');
  });
});

describe('body faults', () => {
  it('large_body: a valid envelope of exactly `bytes` bytes, streamed without Content-Length', async () => {
    const { rid, fault: f } = await fault({ kind: 'large_body' });
    expect(f).toMatchObject({ bytes: 9 * MiB, content_length: false, char: 'x' });
    const res = await wire('/team/lists', { ...demo, 'x-request-id': rid });
    expect(res.status).toBe(200);
    expect(res.headers['content-length']).toBeUndefined();
    expect(res.headers['transfer-encoding']).toBe('chunked');
    expect(res.body.length).toBe(9 * MiB);
    const parsed = JSON.parse(res.body.toString()) as Envelope<{ blob: string }>;
    expect(parsed.code).toBe(0);
    expect(parsed.data.blob).toMatch(/^x+$/);
  });

  it('large_body with content_length: declares the size and sends exactly that', async () => {
    const { rid } = await fault({ kind: 'large_body', bytes: MiB, content_length: true });
    const res = await wire('/team/lists', { ...demo, 'x-request-id': rid });
    expect(res.headers['content-length']).toBe(String(MiB));
    expect(res.body.length).toBe(MiB);
  });

  it('large_body with a multi-byte char: counted in bytes, exact with content_length too', async () => {
    for (const content_length of [false, true]) {
      const { rid } = await fault({
        kind: 'large_body',
        bytes: 100_000,
        char: '€',
        content_length,
      });
      const res = await wire('/team/lists', { ...demo, 'x-request-id': rid });
      expect(res.body.length).toBe(100_000);
      const parsed = JSON.parse(res.body.toString()) as Envelope<{ blob: string }>;
      expect(parsed.data.blob).toMatch(/^€+$/);
      expect(parsed.data.blob.length).toBeGreaterThan(33_000);
    }
  });

  it('gzip_bomb: a small gzip body that inflates to `bytes` bytes of envelope', async () => {
    const { rid } = await fault({ kind: 'gzip_bomb', bytes: 16 * MiB });
    const res = await wire('/team/lists', { ...demo, 'x-request-id': rid });
    expect(res.headers['content-encoding']).toBe('gzip');
    expect(res.body.length).toBeLessThan(MiB / 8);
    const inflated = gunzipSync(res.body);
    expect(inflated.length).toBe(16 * MiB);
    expect((JSON.parse(inflated.toString()) as Envelope<{ blob: string }>).code).toBe(0);
  });

  it('gzip_bomb: fetch decodes it into the envelope', async () => {
    const { rid } = await fault({ kind: 'gzip_bomb', bytes: 64 * 1024 });
    const r = await teams(rid);
    expect(r.text.length).toBe(64 * 1024);
    expect(isSuccess(r)).toBe(true);
  });

  it('slow_body: headers at once, then the body trickles over delay_ms', async () => {
    const { rid } = await fault({ kind: 'slow_body', delay_ms: 600 });
    const started = Date.now();
    const res = await fetch(`${emu.url}/team/lists`, { headers: { ...demo, 'x-request-id': rid } });
    const headersAfter = Date.now() - started;
    expect(res.status).toBe(200);
    const reader = res.body?.getReader();
    if (!reader) throw new Error('no body');
    const chunks: Uint8Array[] = [];
    for (let next = await reader.read(); !next.done; next = await reader.read())
      chunks.push(next.value);
    const total = Date.now() - started;
    expect(headersAfter).toBeLessThan(300);
    expect(total).toBeGreaterThanOrEqual(550);
    expect(total).toBeLessThan(3000);
    expect(chunks.length).toBeGreaterThan(5);
    expect(JSON.parse(Buffer.concat(chunks).toString())).toEqual({
      code: 0,
      msg: 'Success',
      data: { slow: true },
    });
  });
});

describe('connection faults', () => {
  it('hang: answers normally after delay_ms, without holding up other requests', async () => {
    const { rid } = await fault({ kind: 'hang', delay_ms: 400 });
    const started = Date.now();
    const hung = teams(rid);
    const fast = await teams();
    expect(isSuccess(fast)).toBe(true);
    expect(Date.now() - started).toBeLessThan(300);
    expect(isSuccess(await hung)).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(390);
  });

  it('hang: a client that gives up gets its abort, and the emulator carries on', async () => {
    const { rid } = await fault({ kind: 'hang', delay_ms: 60_000 });
    const started = Date.now();
    await expect(teams(rid, AbortSignal.timeout(200))).rejects.toThrow(/abort|timeout/i);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(isSuccess(await teams())).toBe(true);
  });

  it('reset: the connection is destroyed (a network error), and the emulator carries on', async () => {
    const { rid } = await fault({ kind: 'reset' });
    await expect(teams(rid)).rejects.toThrow(TypeError);
    expect(await recorded(rid)).toHaveLength(1);
    expect(isSuccess(await teams())).toBe(true);
  });

  it('reset needs a real socket: in-process (app.request) it is a 500 envelope', async () => {
    const { app } = createEmulator();
    await app.request('/__emulator/faults', {
      method: 'POST',
      body: JSON.stringify({ kind: 'reset' }),
    });
    const res = await app.request('/team/lists', { headers: demo });
    expect(res.status).toBe(500);
    expect(((await res.json()) as Envelope<null>).msg).toMatch(/real socket/);
  });
});

describe('matching', () => {
  it('a fault is used once by default, applies before auth, and its request is recorded', async () => {
    const { rid } = await fault({ kind: 'platform_error' });
    const faulted = await emu.fetch('GET', '/no/such/route', { requestId: rid }); // no key, no route
    expect(JSON.parse(faulted.text)).toMatchObject({ code: 20001 });
    expect(isSuccess(await teams(rid))).toBe(true);
    expect((await recorded(rid)).map((r) => r.path)).toEqual(['/no/such/route', '/team/lists']);
    expect(await emu.control('GET', '/faults')).toEqual([]);
  });

  it('a request_id fault hits only that exact id', async () => {
    const { rid } = await fault({ kind: 'status' });
    expect(isSuccess(await teams(`${rid}-other`))).toBe(true);
    expect(isSuccess(await teams())).toBe(true);
    expect((await teams(rid)).status).toBe(500);
  });

  it('a path fault matches the path prefix, `times` times', async () => {
    await emu.control('POST', '/faults', { path: '/agent/', kind: 'platform_error', times: 2 });
    const x = xKey(DEMO_PLATFORM_KEY);
    expect(isSuccess(await emu.fetch('GET', '/team/lists', { headers: demo }))).toBe(true);
    const codes: number[] = [];
    for (const path of ['/agent/lists', '/agent/info/x', '/agent/lists']) {
      const r = await emu.fetch('GET', path, { headers: x });
      codes.push((JSON.parse(r.text) as Envelope<unknown>).code);
    }
    expect(codes).toEqual([20001, 20001, 0]);
  });

  it('with both request_id and path, both must match', async () => {
    const { rid } = await fault({ kind: 'html', path: '/agent/' });
    expect(isSuccess(await teams(rid))).toBe(true);
    const r = await emu.fetch('GET', '/agent/lists', {
      headers: xKey(DEMO_PLATFORM_KEY),
      requestId: rid,
    });
    expect(r.text).toBe('<html>oops</html>');
  });

  it('a fault with neither hits the next request of any kind; the oldest match goes first', async () => {
    await emu.control('POST', '/faults', { kind: 'bad_envelope' });
    await emu.control('POST', '/faults', { kind: 'html' });
    expect((await teams()).text).toBe('{"hello":"world"}');
    expect((await teams()).text).toBe('<html>oops</html>');
    expect(isSuccess(await teams())).toBe(true);
  });
});

describe('registration', () => {
  it('lists registered faults with their defaults, and DELETE clears them', async () => {
    const { fault: f } = await fault({ kind: 'hang', times: 3 });
    expect(f).toMatchObject({ kind: 'hang', delay_ms: 60_000, remaining: 3, status: 500 });
    expect(f.id).toBeGreaterThan(0);
    await emu.control('POST', '/faults', { path: '/team', kind: 'html' });
    const listed = await emu.control<Fault[]>('GET', '/faults');
    expect(listed.map((x) => x.kind)).toEqual(['hang', 'html']);
    expect(await emu.control('DELETE', '/faults')).toEqual({ ok: true });
    expect(await emu.control('GET', '/faults')).toEqual([]);
  });

  it.each([
    [{ kind: 'boom' }],
    [{}],
    [{ kind: 'status', status: 204 }],
    [{ kind: 'status', status: 304 }],
    [{ kind: 'status', status: 99 }],
    [{ kind: 'status', status: 600 }],
    [{ kind: 'redirect', status: 200 }],
    [{ kind: 'redirect', status: 400 }],
    [{ kind: 'redirect', location: 'not a url' }],
    [{ kind: 'status', location: 'https://elsewhere.example/' }],
    [{ kind: 'html', request_id: '' }],
    [{ kind: 'html', path: 5 }],
    [{ kind: 'hang', delay_ms: -1 }],
    [{ kind: 'hang', delay_ms: 1.5 }],
    [{ kind: 'html', times: 0 }],
    [{ kind: 'large_body', bytes: 63 }],
    [{ kind: 'large_body', bytes: 2 * 1024 * MiB + 1 }],
    [{ kind: 'large_body', content_length: 'yes' }],
    [{ kind: 'large_body', char: 'ab' }],
    [{ kind: 'large_body', char: '"' }],
    [{ kind: 'large_body', char: '\\' }],
    ['[1]'],
    ['nope'],
  ])('refuses %j with 400', async (body) => {
    const r = await emu.fetch('POST', '/__emulator/faults', { body });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text)).toMatchObject({ code: 10400, data: null });
    expect(await emu.control('GET', '/faults')).toEqual([]);
  });
});
