/**
 * Calls the gateway from a browser page and reads its `{code, msg, data}`
 * envelope. A non-zero code becomes an ApiError that carries what a page
 * shows next to a field or in a banner: the code, the message, the field the
 * gateway named (validation errors) and the request id to quote to support.
 */
import type { Envelope, ErrorData } from '../../src/types/wire';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly requestId: string | null,
    /** Field name → the gateway's message for it (validation errors, code 40000). */
    readonly fields: Record<string, string>,
    /** The envelope's data: the request id and the error's details. */
    readonly data: Partial<ErrorData> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface CallOptions {
  method?: string;
  body?: unknown;
  /** Extra headers, e.g. the partner's `Authorization` (never a cookie). */
  headers?: Record<string, string>;
}

/** How every page's call goes: with same-origin credentials only, and no redirect followed. */
export const FETCH_INIT = { credentials: 'same-origin', redirect: 'error' } as const;

export async function call<T>(url: string, options: CallOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = fetch(url, {
    method: options.method ?? 'GET',
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
    ...FETCH_INIT,
  });
  return dataOf<T>(res);
}

/**
 * The `data` of an answer's envelope, or the ApiError it carries. Takes a fetch's
 * Response or a typed client's answer (hono/client), whose envelope type it keeps.
 */
export async function dataOf<T>(
  pending: Promise<{ ok: boolean; status: number; headers: Headers; json(): Promise<Envelope<T>> }>,
): Promise<T> {
  const res = await pending;
  const requestId = res.headers.get('x-request-id');
  let envelope: Envelope<T>;
  try {
    envelope = await res.json();
  } catch {
    throw new ApiError(res.status, -1, `Unexpected answer (HTTP ${res.status})`, requestId, {});
  }
  if (!res.ok || envelope.code !== 0) {
    const data = (envelope.data ?? {}) as Partial<ErrorData>;
    throw new ApiError(
      res.status,
      envelope.code,
      envelope.msg,
      data.request_id ?? requestId,
      fieldsOf(data),
      data,
    );
  }
  return envelope.data;
}

function fieldsOf(data: Partial<ErrorData>): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const e of Array.isArray(data.errors) ? data.errors : []) {
    if (typeof e.field === 'string' && typeof e.message === 'string') fields[e.field] = e.message;
  }
  return fields;
}
