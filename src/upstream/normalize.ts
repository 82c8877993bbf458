/**
 * Turns whatever the platform answered into what the caller gets: a platform
 * envelope passes through unchanged; every kind of failure becomes a gateway
 * envelope with its own code (docs/ERRORS.md).
 */
import { GatewayError } from '../errors';

/** Largest upstream body the gateway will buffer (README, limits). */
export const MAX_UPSTREAM_BYTES = 8 * 1024 * 1024;

export interface Envelope {
  code: number;
  msg: string;
  data: unknown;
}

export interface UpstreamResult {
  status: number;
  /** The body exactly as the platform sent it. */
  text: string;
  /** Parsed envelope; null when served from the cache (only successes are cached). */
  envelope: Envelope | null;
}

export async function readUpstream(res: Response): Promise<UpstreamResult> {
  const declared = Number(res.headers.get('content-length') ?? 0);
  if (declared > MAX_UPSTREAM_BYTES) {
    await res.body?.cancel();
    throw new GatewayError('UPSTREAM_TOO_LARGE');
  }
  const text = await res.text();
  if (text.length > MAX_UPSTREAM_BYTES) throw new GatewayError('UPSTREAM_TOO_LARGE');

  const upstream = { upstream_status: res.status };
  // The tenant's key was refused, whatever the body looks like.
  if (res.status === 401 || res.status === 403)
    throw new GatewayError('UPSTREAM_AUTH_REJECTED', undefined, upstream);
  const type = res.headers.get('content-type') ?? '';
  if (!/\bjson\b/i.test(type)) {
    throw new GatewayError(
      res.ok ? 'UPSTREAM_NOT_JSON' : 'UPSTREAM_HTTP_ERROR',
      undefined,
      upstream,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new GatewayError(
      res.ok ? 'UPSTREAM_INVALID_JSON' : 'UPSTREAM_HTTP_ERROR',
      undefined,
      upstream,
    );
  }
  if (!isEnvelope(parsed)) {
    throw new GatewayError(
      res.ok ? 'UPSTREAM_BAD_ENVELOPE' : 'UPSTREAM_HTTP_ERROR',
      undefined,
      upstream,
    );
  }
  if (res.status >= 500 || (!res.ok && parsed.code === 0)) {
    throw new GatewayError('UPSTREAM_HTTP_ERROR', undefined, {
      ...upstream,
      upstream_code: parsed.code,
    });
  }
  return { status: res.status, text, envelope: parsed };
}

function isEnvelope(value: unknown): value is Envelope {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return Number.isInteger(v.code) && typeof v.msg === 'string' && 'data' in v;
}
