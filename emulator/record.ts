// Records every platform-side request exactly as received (tests assert what
// the upstream saw), then applies a matching fault before auth and routing,
// so a faulted request fails the same way whatever its key or path.
import type { MiddlewareHandler } from 'hono';
import { cutConnection, faultResponse } from './faults';
import type { EmuEnv } from './http';

export const CONTROL_PREFIX = '/__emulator';

/**
 * Set by app.ts on a request that came in under `/__lane/<name>/…`: a base URL with a lane
 * reaches this same platform as if it were another upstream (an isolate keeps a circuit
 * breaker per upstream), and faults can target a lane.
 */
export const LANE_HEADER = 'x-emulator-lane';

/**
 * Reads a body chunk by chunk, telling `progress` as it goes (tests watch an upload arrive
 * while the sender still streams it); a body cut off mid-way comes back incomplete.
 */
async function readProgressively(
  stream: ReadableStream<Uint8Array> | null,
  progress: (bytes: number, done: boolean) => void,
): Promise<{ bytes: Uint8Array<ArrayBuffer>; complete: boolean }> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  let complete = true;
  if (stream) {
    const reader = stream.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        chunks.push(value);
        total += value.byteLength;
        progress(total, false);
      }
    } catch {
      complete = false;
    }
  }
  progress(total, true);
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return { bytes, complete };
}

export const recordAndFault: MiddlewareHandler<EmuEnv> = async function recordAndFault(c, next) {
  if (c.req.path === CONTROL_PREFIX || c.req.path.startsWith(`${CONTROL_PREFIX}/`)) return next();
  const state = c.get('state');
  const headers: Record<string, string> = {};
  c.req.raw.headers.forEach((value, name) => {
    headers[name.toLowerCase()] = value;
  });
  const seen = { method: c.req.method, path: c.req.path, query: c.req.query(), headers };
  c.set('raw', null);
  if (/^multipart\//i.test(headers['content-type'] ?? '')) {
    const received = await readProgressively(c.req.raw.body, (bytes, done) =>
      state.noteReceiving(headers['x-request-id'] ?? '', bytes, done),
    );
    const body = new TextDecoder().decode(received.bytes);
    c.set('body', body);
    c.set('raw', received.bytes);
    state.record({ ...seen, body, bytes: received.bytes.byteLength, complete: received.complete });
    // A body the sender cut off is no request: nothing to answer (the connection is gone).
    if (!received.complete) return c.json({ code: 10400, msg: 'body cut off', data: null }, 400);
  } else {
    const text = c.req.method === 'GET' || c.req.method === 'HEAD' ? '' : await c.req.text();
    const body = text === '' ? null : text;
    c.set('body', body);
    state.record({ ...seen, body });
  }

  const lane = c.req.header(LANE_HEADER) ?? '';
  state.count(lane);
  const key = headers['x-api-key'] ?? headers.authorization?.replace(/^Bearer\s+/i, '');
  const fault = state.takeFault(c.req.path, headers['x-request-id'], { key, lane });
  if (fault?.kind === 'lost_answer') {
    // The platform acts, then its answer never arrives.
    await next();
    cutConnection(c);
    return new Response(null, { status: 499 });
  }
  const faulty = fault && (await faultResponse(c, fault));
  if (faulty) return faulty;
  await next();
};
