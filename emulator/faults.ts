// Fault injection: turns a registered fault into the broken answer the
// gateway must survive (bad status, non-JSON, bad envelope, hang, reset).
import { ApiError, badRequest, type Ctx, envelope } from './http';
import { FAULT_KINDS, type Fault, type FaultKind } from './store';

const NO_BODY_STATUSES = [204, 205, 304];

/** Validates a POST /__emulator/faults body. */
export function parseFault(input: Record<string, unknown>): Omit<Fault, 'id'> {
  const { request_id, path, kind, status = 500, delay_ms = 60_000, times = 1 } = input;
  if (typeof kind !== 'string' || !(FAULT_KINDS as readonly string[]).includes(kind)) {
    throw badRequest(`kind must be one of ${FAULT_KINDS.join(', ')}`);
  }
  if (request_id !== undefined && (typeof request_id !== 'string' || request_id === ''))
    throw badRequest('request_id must be a non-empty string');
  if (path !== undefined && typeof path !== 'string') throw badRequest('path must be a string');
  if (
    !Number.isInteger(status) ||
    (status as number) < 200 ||
    (status as number) > 599 ||
    NO_BODY_STATUSES.includes(status as number)
  ) {
    throw badRequest('status must be an integer HTTP status 200..599 that allows a body');
  }
  if (!Number.isInteger(delay_ms) || (delay_ms as number) < 0)
    throw badRequest('delay_ms must be a non-negative integer');
  if (!Number.isInteger(times) || (times as number) < 1)
    throw badRequest('times must be a positive integer');
  const fault: Omit<Fault, 'id'> = {
    kind: kind as FaultKind,
    status: status as number,
    delay_ms: delay_ms as number,
    remaining: times as number,
  };
  if (request_id !== undefined) fault.request_id = request_id;
  if (path !== undefined) fault.path = path;
  return fault;
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

const raw = (body: string, type: string, status = 200) =>
  new Response(body, { status, headers: { 'content-type': type } });

/** The faulty response, or undefined when the request should then be answered normally (hang). */
export async function faultResponse(c: Ctx, fault: Fault): Promise<Response | undefined> {
  switch (fault.kind) {
    case 'status':
      return raw(
        JSON.stringify(envelope(fault.status, 'emulated failure', null)),
        'application/json',
        fault.status,
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
    case 'reset': {
      const socket = c.env.incoming?.socket;
      if (!socket)
        throw new ApiError(500, 500, 'reset fault needs a real socket (use startEmulator)');
      socket.destroy();
      return new Response(null, { status: 499 });
    }
  }
}
