/**
 * One operation of the operator API, defined once: its method and path, the zod
 * schemas of its path, query, body and answer, the role it needs, the audit action
 * it records, and its words for the document. The handler registers with it
 * (admin/handle.ts), GET /admin/openapi.json is made from it (admin/document.ts),
 * and the console's and the CLI's client are typed from it (ui/lib/admin-client.ts).
 *
 * The definitions live in `*.contract.ts` files beside their handlers. Those files
 * and what they import must hold no Worker code (no bindings, no errors.ts): the
 * console and the CLI type-check against them with their own tsconfig.
 */
import type { Hono } from 'hono';
import type { BlankEnv } from 'hono/types';
import type * as z from 'zod';
import type { OperatorRole } from '../types/settings';
import type { Envelope } from '../types/wire';

/** Where the operator API is mounted: every definition's path starts with it. */
export const ADMIN_BASE = '/admin';

export type AdminMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface AdminOperation {
  method: AdminMethod;
  /** Hono's form, from the root: `/admin/tenants/:id` (the document writes `{id}`). */
  path: `${typeof ADMIN_BASE}/${string}`;
  /** A viewer may call only reads (adminAuth refuses any other method to a viewer). */
  role: OperatorRole;
  /** The audit action it records (some are recorded by the TenantGuard, in its turn). */
  audit?: string;
  summary: string;
  description?: string;
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  /**
   * What `data` holds in the success envelope (the whole answer where `envelope: false`).
   * Made when asked (the document, tests): no isolate pays for it at start.
   */
  answer: () => z.ZodType;
  status?: 200 | 201;
  /** The answer is not wrapped in `{code, msg, data}` (the document itself). */
  envelope?: false;
}

/** Reads may be open to viewers; anything else is an admin's. */
type RoleFor<M extends AdminMethod> = M extends 'get' ? OperatorRole : 'admin';

/** A definition, its literal types kept (the client's types are made from them). */
export function adminOperation<const O extends AdminOperation>(
  operation: O & { role: RoleFor<O['method']> },
): O {
  return operation;
}

export function isAdminOperation(value: unknown): value is AdminOperation {
  return (
    typeof value === 'object' &&
    value !== null &&
    'method' in value &&
    'path' in value &&
    'answer' in value
  );
}

/** The definitions among a contract file's exports (its schemas left out), by name. */
export type OperationsIn<Module> = {
  [K in keyof Module as Module[K] extends AdminOperation ? K : never]: Module[K];
};

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/**
 * An answer schema checked against the wire type that the handlers and Durable Objects
 * making the answer are typed with (types/wire.ts): tsc fails unless the schema makes
 * exactly that type, so the document and the clients cannot drift from the answer.
 */
export const answerOf =
  <T>() =>
  <S extends z.ZodType>(
    schema: S & (Same<z.output<S>, T> extends true ? unknown : { answerShapeDiffers: T }),
  ): S =>
    schema;

// ---- What the handler sees ----------------------------------------------------------

type Out<O, K extends 'params' | 'query' | 'body'> =
  O extends Record<K, infer S extends z.ZodType> ? z.output<S> : never;

/** `c.req.valid(...)` of an operation's handler: what its schemas made of the request. */
export interface ValidatedOf<O> {
  in: object;
  out: { param: Out<O, 'params'>; query: Out<O, 'query'>; json: Out<O, 'body'> };
}

/** What a handler gives back: the answer's data (handle() wraps it in the envelope). */
export type AnswerOf<O> = O extends { answer: () => infer S extends z.ZodType }
  ? z.output<S>
  : never;

// ---- What a client sends and gets ------------------------------------------------------

/**
 * A path parameter as a client puts it in a URL: encoded (ui/lib/admin-client.ts `segments`,
 * which also refuses `.` and `..`), so an id can never reach another route.
 */
export type PathSegment = string & { readonly encodedForAPath: unique symbol };

type Empty = Record<never, never>;

type ClientInput<O> = (O extends { params: infer S extends z.ZodType }
  ? { param: { [K in keyof z.input<S>]: PathSegment } }
  : Empty) &
  (O extends { query: infer S extends z.ZodType }
    ? Empty extends z.input<S>
      ? { query?: z.input<S> }
      : { query: z.input<S> }
    : Empty) &
  (O extends { body: infer S extends z.ZodType } ? { json: z.input<S> } : Empty);

type Endpoint<O> = {
  input: ClientInput<O>;
  output: O extends { envelope: false } ? AnswerOf<O> : Envelope<AnswerOf<O>>;
  outputFormat: 'json';
  status: O extends { status: infer S extends number } ? S : 200;
};

type Method<O> = O extends { method: infer M extends string } ? `$${M}` : never;
type PathOf<O> = O extends { path: infer P extends string } ? P : never;

/** Hono's route schema of a set of definitions (by name): what `hc` types its calls with. */
export type SchemaOf<Ops> = {
  [P in PathOf<Ops[keyof Ops]>]: {
    [K in keyof Ops as PathOf<Ops[K]> extends P ? Method<Ops[K]> : never]: Endpoint<Ops[K]>;
  };
};

/** An app with exactly these routes, for `hono/client`'s `hc<...>()`. */
export type ApiOf<Ops> = Hono<BlankEnv, SchemaOf<Ops>, '/'>;
