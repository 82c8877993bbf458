/**
 * Validation before anything goes upstream. Path, query and body are parsed
 * with the operation's zod schemas, and every failure becomes one envelope that
 * names the field and its bound. Bodies are read once, within MAX_BODY_BYTES.
 * Routes outside the table validate with @hono/zod-validator (`validated`);
 * the platform operations' table entries with `validateInput`, which parses path,
 * query and body in one step and checks the body against the path.
 *
 * @example app.get('/team/lists', validateInput(operation), (c) => c.get('input').query)
 * @example app.post('/admin/tenants', validated('json', createBody), (c) => c.req.valid('json'))
 */
import { zValidator } from '@hono/zod-validator';
import type { Context, MiddlewareHandler } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { z } from 'zod';
import { decodeUtf8, readCapped } from '../bytes';
import { GatewayError, type InputLocation, invalidField } from '../errors';
import { describeIssue } from '../operations/json-schema';
import { noQuery } from '../operations/schemas';
import type { HonoEnv } from '../types/context';
import type { PlatformOperation } from '../types/operations';
import { uploadBody } from './upload';

type Target = 'param' | 'query' | 'json';
const LOCATION: Record<Target, InputLocation> = { param: 'path', query: 'query', json: 'body' };

/** What validation reads of an operation: its input schemas. */
type InputSchemas = Pick<PlatformOperation, 'params' | 'query' | 'body' | 'upload'>;

const NO_QUERY = noQuery();

/**
 * A platform operation's path, query and body, validated with its configured schemas
 * (ROUTE_OVERRIDES applied; proxy.ts sets the operation first) or else the table
 * entry's (defaults applied, unknown fields refused), set as `c.get('input')`. An
 * upload's body is not read here: it is checked as it streams upstream.
 */
export function validateInput(operation: InputSchemas) {
  return createMiddleware<HonoEnv>(async function validateInput(c, next) {
    const schemas: InputSchemas = c.get('operation') ?? operation;
    const path = c.get('declaredParams') ?? c.req.param();
    const params = schemas.params ? parsed(schemas.params, path, 'path') : {};
    const query = parsed(schemas.query ?? NO_QUERY, queryValues(c), 'query');
    let body: Record<string, unknown> | undefined;
    if (schemas.body) {
      body = parsed(schemas.body, await readJsonBody(c), 'body');
      bodyMatchesPath(params, body);
    }
    const upload = schemas.upload ? uploadBody(c, schemas.upload) : undefined;
    c.set('input', { params, query, body, ...(upload ? { upload } : {}) });
    try {
      await next();
    } finally {
      upload?.end();
    }
  });
}

/**
 * One validated target for routes outside the table (operator API, minting),
 * read back typed with `c.req.valid(target)`: @hono/zod-validator, whose hook
 * turns a failure into the gateway's envelope. A JSON body is first read and
 * checked here (413, 415, 40002), then handed on as the request's body, as
 * Hono's bodyLimit does: Hono's own reading would take a non-JSON body as `{}`
 * and has no size bound.
 */
export function validated<T extends Target, S extends z.ZodType<object>>(
  target: T,
  schema: S,
  maxBytes?: number,
) {
  type Validated = { in: { [K in T]: z.input<S> }; out: { [K in T]: z.output<S> } };
  const validator: MiddlewareHandler = zValidator(target, schema, (result) => {
    if (!result.success) throw validationError(LOCATION[target], result.error);
  });
  return createMiddleware<HonoEnv, string, Validated>(async function validated(c, next) {
    if (target === 'json') {
      const bytes = await readJsonBytes(c, maxBytes);
      parseJson(bytes); // malformed JSON is our 40002, never Hono's bare 400
      c.req.raw = new Request(c.req.raw, { body: bytes });
    }
    return validator(c, next);
  });
}

/**
 * Query values as the caller sent them: a repeated name gives an array, which no field accepts.
 * Own properties (fromEntries), so `?__proto__=…` is a parameter, refused as unknown, not a prototype.
 */
function queryValues(c: Context<HonoEnv>): Record<string, string | string[]> {
  return Object.fromEntries(
    Object.entries(c.req.queries()).map(([name, all]) => [
      name,
      all.length === 1 && all[0] !== undefined ? all[0] : all,
    ]),
  );
}

/**
 * A JSON request body: 413 when Content-Length is over MAX_BODY_BYTES (before
 * reading) or the stream runs past it; 415 unless application/json; 40002
 * when it does not parse.
 */
export async function readJsonBody(c: Context<HonoEnv>): Promise<unknown> {
  return parseJson(await readJsonBytes(c));
}

/** The body's bytes, after the size and type checks of readJsonBody. */
async function readJsonBytes(
  c: Context<HonoEnv>,
  maxBytes = c.get('settings').MAX_BODY_BYTES,
): Promise<Uint8Array> {
  const tooLarge = () =>
    new GatewayError('PAYLOAD_TOO_LARGE', {
      message: `Request body exceeds the limit of ${maxBytes} bytes`,
    });
  const declared = c.req.header('content-length');
  if (declared !== undefined && Number(declared) > maxBytes) throw tooLarge();
  // Any other type would be read as `{}`, hiding the mistake behind "field required".
  const type = c.req.header('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') throw new GatewayError('UNSUPPORTED_MEDIA_TYPE');
  return readCapped(c.req.raw.body, maxBytes, tooLarge);
}

function parseJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(decodeUtf8(bytes));
  } catch {
    throw new GatewayError('INVALID_JSON');
  }
}

function parsed<S extends z.ZodType>(
  schema: S,
  value: unknown,
  location: InputLocation,
): z.output<S> {
  // Operators' schemas (operations/json-schema.ts) bring no messages of their own: these name the bound.
  const result = schema.safeParse(value, { error: describeIssue });
  if (!result.success) throw validationError(location, result.error);
  return result.data;
}

function validationError(location: InputLocation, error: Pick<z.ZodError, 'issues'>): GatewayError {
  const unknown = error.issues.flatMap((i) =>
    i.code === 'unrecognized_keys' ? i.keys.map((k) => [...i.path, k].join('.')) : [],
  );
  if (unknown.length > 0) {
    return new GatewayError('UNKNOWN_PARAMETER', {
      message: `Unknown ${location} parameter: ${unknown.join(', ')}`,
      details: {
        errors: unknown.map((field) => ({
          location,
          field,
          message: `${field} is not a known parameter`,
        })),
      },
    });
  }
  const errors = error.issues.map((i) => {
    const field = i.path.join('.') || location;
    const last = String(i.path.at(-1) ?? location);
    return {
      location,
      field,
      message: i.message.startsWith(last) ? i.message : `${field}: ${i.message}`,
    };
  });
  return new GatewayError('VALIDATION_FAILED', {
    message: errors.map((e) => e.message).join('; '),
    details: { errors },
  });
}

/** The live client repeats session_id in a rename body; a mismatch is a mistake. */
function bodyMatchesPath(params: Record<string, unknown>, body: Record<string, unknown>): void {
  for (const [name, value] of Object.entries(params)) {
    if (body[name] !== undefined && body[name] !== value) {
      throw invalidField('body', name, `${name} in the body must match the path`);
    }
  }
}
