/**
 * The operator API's client, typed from its definitions (src/admin/contract.ts):
 * `hono/client`'s `hc` over `AdminApi`, so a call names its route as properties
 * (`admin.tenants[':id'].tokens.$post(...)`) and tsc checks the path, the method, the
 * parameters, the body and the answer against the server. The console (ui/console/api.ts)
 * and the scripts (the CLI's scripts/admin/client.ts, the local stack, the bench) use it.
 * It imports the server's definitions for their types only: nothing of src/ is bundled
 * into a page, and a page builds from ui/ and node_modules alone.
 */
import { type ClientRequestOptions, hc } from 'hono/client';
import type * as z from 'zod';
import type { AdminApi, AdminOperations } from '../../src/admin/contract';
import type { PathSegment } from '../../src/admin/operation';
import type { Envelope } from '../../src/types/wire';

/**
 * Path parameters as a URL takes them: each value encoded, so no id reaches another route.
 * `.` and `..` are refused: encoding leaves them as they are, and a URL resolves them away.
 */
export function segments<const T extends Record<string, string>>(
  values: T,
): { [K in keyof T]: PathSegment } {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(values)) {
    if (value === '.' || value === '..') throw new Error(`${name} cannot be "${value}"`);
    out[name] = encodeURIComponent(value);
  }
  return out as { [K in keyof T]: PathSegment };
}

/** Query values as "given": an absent or empty value is left out, as the console always did. */
function searchParams(query: Record<string, string | string[]>): URLSearchParams {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    for (const one of Array.isArray(value) ? value : [value]) {
      if (one !== undefined && one !== '') params.append(name, String(one));
    }
  }
  return params;
}

/** The operator API at `origin` (its routes below `.admin`, from ADMIN_BASE). */
export function adminClient(origin: string, options: ClientRequestOptions = {}) {
  return hc<AdminApi>(origin, { ...options, buildSearchParams: searchParams }).admin;
}

export type AdminClient = ReturnType<typeof adminClient>;

type Named = AdminOperations;
type Schema<N extends keyof Named, K extends string> =
  Named[N] extends Record<K, infer S extends z.ZodType> ? S : never;

/** The JSON body an operation takes, as a caller writes it. */
export type BodyOf<N extends keyof Named> = z.input<Schema<N, 'body'>>;
/** The query an operation takes, as a caller writes it. */
export type QueryOf<N extends keyof Named> = z.input<Schema<N, 'query'>>;
/** What an operation answers: the `data` of its envelope. */
export type AnswerTo<N extends keyof Named> = Named[N] extends {
  answer: () => infer S extends z.ZodType;
}
  ? z.output<S>
  : never;

/** A call's answer as `hc` gives it: what the envelope is read from. */
export interface Answered<T> {
  ok: boolean;
  status: number;
  headers: Headers;
  json(): Promise<T>;
}

export type { Envelope };
