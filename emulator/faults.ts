// Fault injection: turns a registered fault into the broken answer the
// gateway must survive (bad status, with or without Retry-After, non-JSON,
// bad envelope, hang or slow answer, reset, oversized, compressed or
// trickling bodies, redirects, a write whose answer is lost), for a number of
// requests or for a time, steadily, flapping or for one request in N.
import { Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { ApiError, badRequest, type Ctx, envelope } from './http';
import { FAULT_KINDS, type Fault, type FaultKind } from './store';

const NO_BODY_STATUSES = [204, 205, 304];
/** Largest body a fault may send: 2 GiB. */
const MAX_FAULT_BYTES = 2 * 1024 * 1024 * 1024;
/** Bodies are streamed in chunks of this size, never built whole. */
const CHUNK = 64 * 1024;

/** Validates a POST /__emulator/faults body. */
export function parseFault(
  input: Record<string, unknown>,
  now = Date.now(),
): Omit<Fault, 'id' | 'since' | 'seen'> {
  const {
    request_id,
    path,
    kind,
    delay_ms = 60_000,
    times = 1,
    bytes = 9 * 1024 * 1024,
    content_length = false,
    char = 'x',
  } = input;
  const status = input.status ?? (kind === 'redirect' ? 302 : 500);
  if (typeof kind !== 'string' || !(FAULT_KINDS as readonly string[]).includes(kind)) {
    throw badRequest(`kind must be one of ${FAULT_KINDS.join(', ')}`);
  }
  if (request_id !== undefined && (typeof request_id !== 'string' || request_id === ''))
    throw badRequest('request_id must be a non-empty string');
  if (path !== undefined && typeof path !== 'string') throw badRequest('path must be a string');
  const lowest = kind === 'redirect' ? 300 : 200;
  const highest = kind === 'redirect' ? 399 : 599;
  if (
    !Number.isInteger(status) ||
    (status as number) < lowest ||
    (status as number) > highest ||
    NO_BODY_STATUSES.includes(status as number)
  ) {
    throw badRequest(
      `status must be an integer HTTP status ${lowest}..${highest} that allows a body`,
    );
  }
  if (!Number.isInteger(bytes) || (bytes as number) < 64 || (bytes as number) > MAX_FAULT_BYTES) {
    throw badRequest(`bytes must be an integer from 64 to ${MAX_FAULT_BYTES}`);
  }
  if (typeof content_length !== 'boolean') throw badRequest('content_length must be true or false');
  if (typeof char !== 'string' || [...char].length !== 1 || char === '"' || char === '\\') {
    throw badRequest('char must be one character other than a quote or a backslash');
  }
  if (!Number.isInteger(delay_ms) || (delay_ms as number) < 0)
    throw badRequest('delay_ms must be a non-negative integer');
  if (!Number.isInteger(times) || (times as number) < 1)
    throw badRequest('times must be a positive integer');
  const { location } = input;
  if (location !== undefined && (kind !== 'redirect' || !isHttpUrl(location)))
    throw badRequest('location must be an http(s) URL, for a redirect');
  const timing = parseTiming(input, now);
  const fault: Omit<Fault, 'id' | 'since' | 'seen'> = {
    ...timing,
    kind: kind as FaultKind,
    status: status as number,
    delay_ms: delay_ms as number,
    remaining: times as number,
    bytes: bytes as number,
    content_length,
    char,
  };
  if (typeof location === 'string') fault.location = location;
  if (request_id !== undefined) fault.request_id = request_id;
  if (path !== undefined) fault.path = path;
  return fault;
}

/** The fields that say when and to whom a fault applies, beyond request_id and path. */
function parseTiming(input: Record<string, unknown>, now: number) {
  const { retry_after, platform_key, lane, for_ms, flap_ms, every } = input;
  const positive = (v: unknown) => Number.isInteger(v) && (v as number) >= 1;
  const out: Pick<Fault, 'retry_after' | 'platform_key' | 'lane' | 'until' | 'flap_ms' | 'every'> =
    {};
  if (retry_after !== undefined) {
    if (input.kind !== 'status' || (typeof retry_after !== 'string' && !positive(retry_after)))
      throw badRequest('retry_after must be seconds or an HTTP date, for a status fault');
    out.retry_after = String(retry_after);
  }
  if (platform_key !== undefined) {
    if (typeof platform_key !== 'string' || platform_key === '')
      throw badRequest('platform_key must be a non-empty string');
    out.platform_key = platform_key;
  }
  if (lane !== undefined) {
    if (typeof lane !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(lane))
      throw badRequest('lane must be 1 to 64 letters, digits, _ or -');
    out.lane = lane;
  }
  if (for_ms !== undefined) {
    if (!positive(for_ms)) throw badRequest('for_ms must be a positive integer');
    out.until = now + (for_ms as number);
  }
  if (flap_ms !== undefined) {
    if (!positive(flap_ms) || for_ms === undefined)
      throw badRequest('flap_ms must be a positive integer, with for_ms');
    out.flap_ms = flap_ms as number;
  }
  if (every !== undefined) {
    if (!positive(every)) throw badRequest('every must be a positive integer');
    out.every = every as number;
  }
  return out;
}

/** Resolves true after `ms`, or false as soon as `signal` aborts (client went away). */
export function wait(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

const raw = (body: string, type: string, status = 200, extra: Record<string, string> = {}) =>
  new Response(body, { status, headers: { 'content-type': type, ...extra } });

/** Whether a value is an absolute http(s) URL (a redirect's Location). */
export function isHttpUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

/** The faulty response, or undefined when the request should then be answered normally (hang). */
export async function faultResponse(c: Ctx, fault: Fault): Promise<Response | undefined> {
  switch (fault.kind) {
    case 'status':
      return raw(
        JSON.stringify(envelope(fault.status, 'emulated failure', null)),
        'application/json',
        fault.status,
        fault.retry_after ? { 'retry-after': fault.retry_after } : {},
      );
    case 'html':
      return raw('<html>oops</html>', 'text/html');
    case 'invalid_json':
      return raw('{"code":0,"msg":', 'application/json');
    case 'bad_envelope':
      return raw('{"hello":"world"}', 'application/json');
    case 'platform_error':
      return raw(JSON.stringify(envelope(20001, 'platform says no', null)), 'application/json');
    case 'hang':
      // Nobody reads the answer once the client is gone; any response will do.
      return (await wait(fault.delay_ms, c.req.raw.signal))
        ? undefined
        : new Response(null, { status: 499 });
    case 'large_body':
      return streamed(envelopeOfSize(fault.bytes, fault.char), {
        'content-type': 'application/json',
        ...(fault.content_length ? { 'content-length': String(fault.bytes) } : {}),
      });
    case 'gzip_bomb':
      return gzipped(envelopeOfSize(fault.bytes, fault.char));
    case 'slow_body':
      return trickled(JSON.stringify(envelope(0, 'Success', { slow: true })), fault.delay_ms);
    case 'redirect':
      return raw(
        JSON.stringify(envelope(0, 'Success', {})),
        'application/json',
        fault.status,
        fault.location ? { location: fault.location } : {},
      );
    case 'reset':
      cutConnection(c);
      return new Response(null, { status: 499 });
    case 'lost_answer':
      // Answered in record.ts: the request is carried out, then the connection is cut.
      return undefined;
  }
}

/** Destroys the request's socket: the client sees the connection reset, with no answer. */
export function cutConnection(c: Ctx): void {
  const socket = c.env?.incoming?.socket; // no env at all in-process (app.request)
  if (!socket) throw new ApiError(500, 500, 'this fault needs a real socket (use startEmulator)');
  socket.destroy();
}

/**
 * A valid envelope of exactly `size` bytes, produced chunk by chunk:
 * `{"code":0,…,"data":{"blob":"xxx…"}}`. When a multi-byte `char` does not
 * fill the blob exactly, trailing spaces (valid JSON whitespace) make up the
 * difference, so a declared Content-Length is always the true length.
 */
function* envelopeOfSize(size: number, char: string): Generator<Uint8Array, void, undefined> {
  const head = '{"code":0,"msg":"Success","data":{"blob":"';
  const tail = '"}}';
  yield Buffer.from(head);
  const width = Buffer.byteLength(char);
  const filler = Buffer.from(char.repeat(Math.floor(CHUNK / width)));
  let left = size - head.length - tail.length;
  while (left >= width) {
    const n = Math.min(left - (left % width), filler.length);
    yield n === filler.length ? filler : filler.subarray(0, n);
    left -= n;
  }
  yield Buffer.from(tail + ' '.repeat(left));
}

function streamed(chunks: Iterator<Uint8Array>, headers: Record<string, string>): Response {
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = chunks.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
  });
  return new Response(body, { status: 200, headers });
}

/** The chunks gzip-compressed as they stream: a small body that inflates to all of them. */
function gzipped(chunks: Iterable<Uint8Array>): Response {
  const compressed = Readable.from(chunks).pipe(createGzip());
  return new Response(Readable.toWeb(compressed) as ReadableStream<Uint8Array>, {
    status: 200,
    headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
  });
}

/** A body sent a few bytes at a time over `overMs`. */
function trickled(text: string, overMs: number): Response {
  const bytes = Buffer.from(text);
  const step = Math.max(1, Math.ceil(bytes.length / 20));
  const pause = overMs / Math.ceil(bytes.length / step);
  let at = 0;
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (at >= bytes.length) return controller.close();
      await new Promise((r) => setTimeout(r, pause));
      controller.enqueue(new Uint8Array(bytes.subarray(at, at + step)));
      at += step;
    },
  });
  return new Response(body, { status: 200, headers: { 'content-type': 'application/json' } });
}
