/**
 * Turns whatever the platform answered into what the caller gets: a platform
 * envelope passes through unchanged; every kind of failure becomes a gateway
 * envelope with its own code (docs/ERRORS.md).
 */
import { type Bytes, decodeUtf8, readCapped } from '../bytes';
import { humanDuration } from '../duration';
import { ERRORS, GatewayError } from '../errors';
import type { Envelope } from '../types/wire';
import { retryAfterSeconds } from './retry-after';

/** Largest upstream body the gateway will read, in bytes (docs/BOUNDS.md). */
export const MAX_UPSTREAM_BYTES = 8 * 1024 * 1024;

export interface UpstreamResult {
  status: number;
  /** The body exactly as the platform sent it (or as masked, for secrets). */
  body: Bytes;
  /** Parsed envelope; null when served from the cache (only successes are cached). */
  envelope: Envelope<unknown> | null;
  /** The body decoded, where it already was (a fresh answer), so nothing decodes it twice. */
  text?: string;
}

/**
 * Reads the platform's answer within MAX_UPSTREAM_BYTES and checks its
 * envelope. The fetch's abort signal also stops reading the body, so its
 * deadline covers every byte (test/upstream-limits.test.ts).
 */
export async function readUpstream(res: Response): Promise<UpstreamResult> {
  const tooLarge = () => new GatewayError('UPSTREAM_TOO_LARGE');
  const declared = Number(res.headers.get('content-length') ?? 0);
  if (declared > MAX_UPSTREAM_BYTES) {
    await res.body?.cancel();
    throw tooLarge();
  }
  const body = await readBody(res, tooLarge);
  backpressure(res, body);

  const upstream = { upstream_status: res.status };
  const failed = (kind: 'UPSTREAM_NOT_JSON' | 'UPSTREAM_INVALID_JSON' | 'UPSTREAM_BAD_ENVELOPE') =>
    new GatewayError(res.ok ? kind : 'UPSTREAM_HTTP_ERROR', { details: upstream });
  // The tenant's key was refused, whatever the body looks like.
  if (res.status === 401 || res.status === 403) {
    throw new GatewayError('UPSTREAM_AUTH_REJECTED', { details: upstream });
  }
  if (!/\bjson\b/i.test(res.headers.get('content-type') ?? '')) throw failed('UPSTREAM_NOT_JSON');
  const text = decodeUtf8(body);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw failed('UPSTREAM_INVALID_JSON');
  }
  if (!isEnvelope(parsed)) throw failed('UPSTREAM_BAD_ENVELOPE');
  // A redirect is no answer to pass on: the caller cannot follow it to the platform.
  const redirect = res.status >= 300 && res.status < 400;
  if (res.status >= 500 || redirect || (!res.ok && parsed.code === 0)) {
    throw new GatewayError('UPSTREAM_HTTP_ERROR', {
      details: { ...upstream, upstream_code: parsed.code },
    });
  }
  return { status: res.status, body, envelope: parsed, text };
}

/**
 * A 429 or 503 with Retry-After is the platform asking for a pause: it reaches
 * the caller as a 429 or 503 envelope, and the gateway holds its own calls for
 * that long, at most MAX_PLATFORM_PAUSE_S (upstream/upstream-health.ts). A
 * 429 carries the platform's Retry-After unchanged; a 503's is then said as
 * the gateway holds it (backoffAsHeld).
 */
function backpressure(res: Response, body: Bytes): void {
  if (res.status !== 429 && res.status !== 503) return;
  const header = res.headers.get('retry-after');
  const seconds = retryAfterSeconds(header, Date.now());
  if (header === null || seconds === null) return;
  const kind = res.status === 429 ? 'UPSTREAM_RATE_LIMITED' : 'UPSTREAM_BACKING_OFF';
  throw new GatewayError(kind, {
    message: `${ERRORS[kind].msg}; retry in ${humanDuration(seconds)}`,
    details: {
      upstream_status: res.status,
      upstream_code: parseEnvelope(body)?.code ?? null,
      retry_after_s: seconds,
    },
    headers: { 'Retry-After': header.trim() },
  });
}

/**
 * A 503's pause (50302) as the gateway holds it, so the first answer of a
 * pause says what every held one after it says: Retry-After and
 * retry_after_s are the gateway's hold, at most MAX_PLATFORM_PAUSE_S (a
 * client obeying the platform's 300 s would wait five minutes for a minute's
 * hold). The platform's own value travels in X-Platform-Retry-After, as sent,
 * and platform_retry_after_s.
 */
export function backoffAsHeld(err: GatewayError, maxPauseMs: number): GatewayError {
  const asked = err.details.retry_after_s;
  if (err.kind !== 'UPSTREAM_BACKING_OFF' || typeof asked !== 'number') return err;
  const held = Math.min(asked, Math.ceil(maxPauseMs / 1000));
  return new GatewayError(err.kind, {
    message: `${ERRORS[err.kind].msg}; retry in ${humanDuration(held)}`,
    details: { ...err.details, retry_after_s: held, platform_retry_after_s: asked },
    headers: {
      'Retry-After': String(held),
      'X-Platform-Retry-After': err.headers['Retry-After'] ?? String(asked),
    },
  });
}

/**
 * The whole body within MAX_UPSTREAM_BYTES. A body whose size is declared and
 * sent as is is read in one go; anything else (compressed, or of unknown
 * length) is counted while it streams, so nothing inflates past the limit.
 */
async function readBody(res: Response, tooLarge: () => Error): Promise<Bytes> {
  const encoding = res.headers.get('content-encoding');
  const plain = encoding === null || encoding === '' || encoding === 'identity';
  if (plain && res.headers.has('content-length')) {
    return new Uint8Array(await res.arrayBuffer());
  }
  return readCapped(res.body, MAX_UPSTREAM_BYTES, tooLarge);
}

/** The envelope in a body, or null when it is not one. */
export function parseEnvelope(body: Bytes): Envelope<unknown> | null {
  try {
    const parsed: unknown = JSON.parse(decodeUtf8(body));
    return isEnvelope(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

function isEnvelope(value: unknown): value is Envelope<unknown> {
  if (typeof value !== 'object' || value === null) return false;
  return (
    Number.isInteger(Reflect.get(value, 'code')) &&
    typeof Reflect.get(value, 'msg') === 'string' &&
    'data' in value
  );
}

/** The status (401 or 403) with which the platform refused the tenant's key, for the key's health. */
export function rejectedKeyStatus(err: unknown): number | undefined {
  if (!(err instanceof GatewayError) || err.kind !== 'UPSTREAM_AUTH_REJECTED') return undefined;
  const status = err.details.upstream_status;
  return typeof status === 'number' ? status : undefined;
}
