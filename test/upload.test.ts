/**
 * POST /session/upload: a multipart/form-data body streamed to the platform
 * (the emulator) as it arrives, within MAX_UPLOAD_BYTES, checked part by part
 * on the way (docs/API.md, "Uploading files").
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  admin,
  asTenant,
  createTenant,
  envelope,
  expectRefusal,
  gateway,
  gatewayWith,
  platformKeys,
  requestId,
  type TestTenant,
  UPSTREAM,
  until,
  upstreamSaw,
} from './helpers';

const BOUNDARY = '----gatewaytest7MA4YWxkTrZu0gW';
const encoder = new TextEncoder();

interface Part {
  name: string;
  filename?: string;
  content: string | Uint8Array;
}

/** A multipart/form-data body, as a browser or the platform's client makes it. */
function multipart(parts: Part[], boundary = BOUNDARY): Uint8Array {
  const chunks: Uint8Array[] = [];
  for (const part of parts) {
    const file = part.filename === undefined ? '' : `; filename="${part.filename}"`;
    const type = part.filename === undefined ? '' : '\r\nContent-Type: text/plain';
    chunks.push(
      encoder.encode(
        `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"${file}${type}\r\n\r\n`,
      ),
    );
    chunks.push(typeof part.content === 'string' ? encoder.encode(part.content) : part.content);
    chunks.push(encoder.encode('\r\n'));
  }
  chunks.push(encoder.encode(`--${boundary}--\r\n`));
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}

const FORM = `multipart/form-data; boundary=${BOUNDARY}`;

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', bytes);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** What the emulator has received of a body still arriving. */
async function receiving(id: string): Promise<{ bytes: number; done: boolean }> {
  const res = await fetch(`${UPSTREAM}/__emulator/receiving?request_id=${encodeURIComponent(id)}`);
  return res.json();
}

let tenant: TestTenant;
let sessionId: string;
beforeAll(async () => {
  tenant = await createTenant(platformKeys.demo, 'uploads');
  const made = await asTenant(tenant, '/session/create', {
    method: 'POST',
    json: { task: 'Read the attached files' },
  });
  sessionId = made.body.data.session_id;
});

describe('POST /session/upload', () => {
  it('passes the body through to the platform, with the key in x-api-key', async () => {
    const file = 'name,price\nwidget,3\n';
    const body = multipart([
      { name: 'session_id', content: sessionId },
      { name: 'files', filename: 'prices.csv', content: file },
      { name: 'files', filename: 'notes.md', content: '# Notes' },
    ]);
    const {
      res,
      body: answer,
      id,
    } = await asTenant(tenant, '/session/upload', {
      method: 'POST',
      headers: { 'content-type': FORM },
      body,
    });
    expect(res.status).toBe(200);
    expect(answer.code).toBe(0);
    const digest = (await sha256Hex(encoder.encode(file))).slice(0, 16);
    expect(answer.data).toEqual([
      { file_url: `https://files.emulator.invalid/${digest}/prices.csv`, file_name: 'prices.csv' },
      {
        file_url: expect.stringMatching(/notes\.md$/),
        file_name: 'notes.md',
      },
    ]);
    const [seen, ...more] = await upstreamSaw(id);
    expect(more).toEqual([]);
    expect(seen?.headers['x-api-key']).toBe(platformKeys.demo);
    expect(seen?.headers.authorization).toBeUndefined();
    expect(JSON.stringify(seen?.headers)).not.toContain(tenant.token);
    // Byte for byte what was sent, with its boundary and length.
    expect(seen?.headers['content-type']).toBe(FORM);
    expect(seen?.headers['content-length']).toBe(String(body.byteLength));
    expect(seen?.body).toBe(new TextDecoder().decode(body));
    const session = await asTenant(tenant, `/session/info/${sessionId}`);
    expect(session.body.data.attachments).toHaveLength(2);
  });

  it('streams: the platform has the first part before the caller has sent the last', async () => {
    const id = requestId('upload-stream');
    const head = encoder.encode(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="files"; filename="big.txt"\r\n\r\n${'a'.repeat(256 * 1024)}`,
    );
    const tail = encoder.encode(`\r\n--${BOUNDARY}--\r\n`);
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    let step = 0;
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (step++ === 0) return controller.enqueue(head);
        // The end of the body waits until the platform has seen its beginning.
        await released;
        controller.enqueue(tail);
        controller.close();
      },
    });
    const answer = gateway('/session/upload', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tenant.token}`,
        'content-type': FORM,
        'x-request-id': id,
      },
      body: stream,
      // @ts-expect-error: workerd's RequestInit takes `duplex` for a streamed body
      duplex: 'half',
    });
    await until(async () => (await receiving(id)).bytes >= 200 * 1024, 'the first bytes upstream');
    expect((await receiving(id)).done).toBe(false);
    release();
    const res = await answer;
    expect(res.status).toBe(200);
    expect((await envelope(res)).data[0].file_name).toBe('big.txt');
  });

  it('refuses a Content-Length over MAX_UPLOAD_BYTES at once, without reading the body', async () => {
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        controller.enqueue(new Uint8Array(64 * 1024));
      },
    });
    const id = requestId('upload-declared');
    const res = await gatewayWith({ MAX_UPLOAD_BYTES: String(1024 * 1024) }, '/session/upload', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tenant.token}`,
        'content-type': FORM,
        // Twice what an isolate may hold (128 MiB): it must never try.
        'content-length': String(256 * 1024 * 1024),
        'x-request-id': id,
      },
      body,
      // @ts-expect-error: workerd's RequestInit takes `duplex` for a streamed body
      duplex: 'half',
    });
    const refused = await expectRefusal(res, 'PAYLOAD_TOO_LARGE');
    expect(refused.msg).toContain('1048576 bytes (MAX_UPLOAD_BYTES)');
    expect(pulled).toBeLessThanOrEqual(2);
    expect(await upstreamSaw(id)).toEqual([]);
  });

  it('refuses a streamed body larger than an isolate could hold once it passes the cap', async () => {
    const cap = 1024 * 1024;
    const chunk = new Uint8Array(64 * 1024).fill(97);
    const total = 256 * 1024 * 1024;
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) {
          const head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="files"; filename="huge.bin"\r\n\r\n`;
          sent += head.length;
          return controller.enqueue(encoder.encode(head));
        }
        if (sent >= total) return controller.close();
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const id = requestId('upload-stream-cap');
    const res = await gatewayWith({ MAX_UPLOAD_BYTES: String(cap) }, '/session/upload', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tenant.token}`,
        'content-type': FORM,
        'x-request-id': id,
      },
      body,
      // @ts-expect-error: workerd's RequestInit takes `duplex` for a streamed body
      duplex: 'half',
    });
    await expectRefusal(res, 'PAYLOAD_TOO_LARGE');
    // Read up to the cap and a little buffering, never the 256 MiB.
    expect(sent).toBeLessThan(cap + 1024 * 1024);
    await until(async () => (await upstreamSaw(id)).length > 0, 'the cut-off request recorded');
    const [seen] = await upstreamSaw(id);
    expect(seen?.complete).toBe(false);
    expect(seen?.bytes).toBeLessThanOrEqual(cap);
  });

  it.each([
    ['not multipart', 'application/json', '{}', 'UNSUPPORTED_MEDIA_TYPE', 'multipart/form-data'],
    ['no boundary', 'multipart/form-data', 'x', 'UNSUPPORTED_MEDIA_TYPE', 'boundary'],
    [
      'no files',
      FORM,
      multipart([{ name: 'session_id', content: 'abc' }]),
      'VALIDATION_FAILED',
      'at least one file',
    ],
    [
      'an unknown part',
      FORM,
      multipart([{ name: 'file', filename: 'a.txt', content: 'x' }]),
      'UNKNOWN_PARAMETER',
      'file',
    ],
    [
      'a file without a name',
      FORM,
      multipart([{ name: 'files', filename: '', content: 'x' }]),
      'VALIDATION_FAILED',
      'each file needs a name',
    ],
    [
      'a session_id sent as a file',
      FORM,
      multipart([{ name: 'session_id', filename: 's.txt', content: 'x' }]),
      'VALIDATION_FAILED',
      'text field',
    ],
    [
      'a bad session_id',
      FORM,
      multipart([
        { name: 'files', filename: 'a.txt', content: 'x' },
        { name: 'session_id', content: 'no spaces please' },
      ]),
      'VALIDATION_FAILED',
      'session_id must be 1 to 128',
    ],
    [
      'too many files',
      FORM,
      multipart(
        Array.from({ length: 21 }, (_, i) => ({
          name: 'files',
          filename: `${i}.txt`,
          content: 'x',
        })),
      ),
      'VALIDATION_FAILED',
      'at most 20 files',
    ],
    [
      'a body without its closing boundary',
      FORM,
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="files"; filename="a.txt"\r\n\r\nabc`,
      'BAD_REQUEST',
      'closing boundary',
    ],
  ] as const)(
    'refuses %s, and the platform never gets a whole request',
    async (_what, type, body, kind, says) => {
      const answer = await asTenant(tenant, '/session/upload', {
        method: 'POST',
        headers: { 'content-type': type },
        body,
      });
      expect((await expectRefusal(answer, kind)).msg).toContain(says);
      for (const seen of await upstreamSaw(answer.id)) expect(seen.complete).toBe(false);
    },
  );

  it('a token revoked while its upload streams cuts the upload off (40102), as it closes an event stream', async () => {
    const owner = await createTenant(platformKeys.demo, 'upload revoked');
    const id = requestId('upload-revoked');
    const head = encoder.encode(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="files"; filename="slow.txt"\r\n\r\n${'a'.repeat(16 * 1024)}`,
    );
    // After the revocation the caller goes on sending 1 KiB every 25 ms: 400 pieces, 10 s at least.
    const PIECES = 400;
    let revoke!: () => void;
    const revoked = new Promise<void>((r) => {
      revoke = r;
    });
    let afterRevoke = 0;
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(head);
      },
      async pull(controller) {
        await revoked;
        if (afterRevoke >= PIECES) {
          controller.enqueue(encoder.encode(`\r\n--${BOUNDARY}--\r\n`));
          return controller.close();
        }
        afterRevoke++;
        await new Promise((r) => setTimeout(r, 25));
        controller.enqueue(new Uint8Array(1024).fill(98));
      },
    });
    // A deadline longer than the whole upload: only the revocation can cut it.
    const answer = gatewayWith({ UPSTREAM_TIMEOUT_MS: '60000' }, '/session/upload', {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}`, 'content-type': FORM, 'x-request-id': id },
      body,
      // @ts-expect-error: workerd's RequestInit takes `duplex` for a streamed body
      duplex: 'half',
    });
    await until(async () => (await receiving(id)).bytes >= 16 * 1024, 'the first bytes upstream');
    const res = await admin(`/tenants/${owner.id}/tokens/${owner.tokenId}`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    revoke();
    const refused = await expectRefusal(await answer, 'TOKEN_REVOKED');
    expect(refused.msg).toContain('cut off');
    // Cut off while the caller was still sending: within the check's second, plus a loaded machine's slack.
    expect(afterRevoke).toBeLessThan(PIECES / 4);
    await until(async () => (await upstreamSaw(id)).length > 0, 'the cut-off request recorded');
    const [seen] = await upstreamSaw(id);
    expect(seen?.complete).toBe(false);
  });

  it('takes no Idempotency-Key, and needs sessions:write', async () => {
    const body = multipart([{ name: 'files', filename: 'a.txt', content: 'x' }]);
    const keyed = await asTenant(tenant, '/session/upload', {
      method: 'POST',
      headers: { 'content-type': FORM, 'idempotency-key': 'k1' },
      body,
    });
    await expectRefusal(keyed, 'IDEMPOTENCY_KEY_NOT_TAKEN');
    const reader = await createTenant(platformKeys.demo, 'reader', ['read-only']);
    const refused = await asTenant(reader, '/session/upload', {
      method: 'POST',
      headers: { 'content-type': FORM },
      body,
    });
    expect((await expectRefusal(refused, 'SCOPE_REQUIRED')).data.scope).toBe('sessions:write');
    expect(await upstreamSaw(refused.id)).toEqual([]);
  });
});
