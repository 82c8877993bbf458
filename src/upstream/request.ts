/**
 * Builds the upstream request from validated parts only: nothing the caller
 * sent reaches the platform unless it passed the route's schema or the
 * header allow-list below. The caller's Authorization, x-api-key, Cookie and
 * hop-by-hop headers are therefore never forwarded.
 */

import type { ResolvedRoute } from '../routes/types';
import type { UploadBody } from '../types/routes';
import type { Settings } from '../types/settings';

/** Caller headers worth passing on; everything else is dropped. */
const FORWARDED_HEADERS = ['accept-language', 'user-agent'] as const;

export interface UpstreamCall {
  route: ResolvedRoute;
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body?: Record<string, unknown>;
  /** An upload route's multipart body, streamed as it arrives (middleware/upload.ts). */
  upload?: UploadBody;
  platformKey: string;
  requestId: string;
  callerHeaders: Headers;
  /** W3C trace context passed on (observability/trace.ts). */
  trace?: { traceparent: string; tracestate?: string };
}

function upstreamUrl(
  base: string,
  route: ResolvedRoute,
  params: Record<string, unknown>,
  query: Record<string, unknown>,
): string {
  // Most paths have no placeholder: no regex pass for them.
  const path = !route.upstreamPath.includes(':')
    ? route.upstreamPath
    : route.upstreamPath.replace(/:([A-Za-z_]+)/g, (_, name: string) =>
        // Own properties only: an operator's `:constructor` placeholder is empty, not a function.
        encodeURIComponent(String(Object.hasOwn(params, name) ? params[name] : '')),
      );
  const search = new URLSearchParams();
  for (const name of Object.keys(query).sort()) {
    const value = query[name];
    if (value !== undefined) search.set(name, String(value));
  }
  const qs = search.toString();
  return `${base}${path}${qs ? `?${qs}` : ''}`;
}

/** What fetch() gets: the URL and a plain init (no Request object to build and copy). */
export interface UpstreamRequest {
  url: string;
  init: RequestInit & { headers: Record<string, string> };
  /** Why the caller's streamed body was cut off, if it was: then the failure is the caller's. */
  callerFault?: () => Error | null;
  /** Whether the gateway is waiting for the caller's streamed body: a deadline then is the caller's. */
  awaitingCaller?: () => boolean;
  /** Aborts the call when the caller's streamed body is refused mid-way. */
  signal?: AbortSignal;
}

export function buildUpstreamRequest(settings: Settings, call: UpstreamCall): UpstreamRequest {
  const headers: Record<string, string> = {
    accept: 'application/json',
    'x-request-id': call.requestId,
  };
  if (call.trace) {
    headers.traceparent = call.trace.traceparent;
    if (call.trace.tracestate) headers.tracestate = call.trace.tracestate;
  }
  for (const name of FORWARDED_HEADERS) {
    const value = call.callerHeaders.get(name);
    if (value) headers[name] = value;
  }
  const scheme = settings.PLATFORM_AUTH_SCHEME;
  headers[call.route.credential] =
    call.route.credential === 'authorization' && scheme
      ? `${scheme} ${call.platformKey}`
      : call.platformKey;

  const url = upstreamUrl(settings.PLATFORM_BASE_URL, call.route, call.params, call.query);
  const { upload } = call;
  if (upload) {
    headers['content-type'] = upload.contentType;
    // With the caller's length, the platform gets it too; without, the body goes chunked.
    const body =
      upload.length === null
        ? upload.stream
        : upload.stream.pipeThrough(new FixedLengthStream(upload.length));
    const init = { method: call.route.method, headers, body, redirect: 'manual' as const };
    return {
      url,
      init,
      callerFault: upload.failure,
      awaitingCaller: upload.awaitingCaller,
      signal: upload.signal,
    };
  }
  const hasBody = call.body !== undefined;
  if (hasBody) headers['content-type'] = 'application/json';
  return {
    url,
    init: {
      method: call.route.method,
      headers,
      body: hasBody ? JSON.stringify(call.body) : null,
      redirect: 'manual',
    },
  };
}
