/**
 * Validation before anything goes upstream: zod schemas from the route table
 * run through @hono/zod-validator, and every failure becomes one envelope
 * that names the field and its bound.
 */
import { zValidator } from '@hono/zod-validator';
import { createMiddleware } from 'hono/factory';
import { HTTPException } from 'hono/http-exception';
import type { z } from 'zod';
import type { HonoEnv } from '../env';
import { GatewayError } from '../errors';

type Target = 'param' | 'query' | 'json';
const LOCATION: Record<Target, string> = { param: 'path', query: 'query', json: 'body' };

export function validated<T extends Target, S extends z.ZodType>(target: T, schema: S) {
  const validator = zValidator<S, T, HonoEnv, string>(target, schema, undefined, {
    // Validation failures never reach a hook's Response: they throw, so onError
    // renders them in the same envelope as every other gateway error.
    validationFunction: (s, value) => {
      const result = s.safeParse(value);
      if (!result.success) throw validationError(LOCATION[target], result.error);
      return result;
    },
  });
  if (target !== 'json') return validator;
  // The body is parsed once, here; the validator reports broken JSON as a bare 400.
  return createMiddleware<HonoEnv>(async (c, next) => {
    try {
      return await validator(c as never, next);
    } catch (err) {
      if (err instanceof HTTPException && err.status === 400)
        throw new GatewayError('INVALID_JSON');
      throw err;
    }
  }) as unknown as typeof validator;
}

function validationError(location: string, error: z.ZodError): GatewayError {
  const unknown = error.issues.flatMap((i) =>
    i.code === 'unrecognized_keys' ? i.keys.map((k) => [...i.path, k].join('.')) : [],
  );
  if (unknown.length > 0) {
    return new GatewayError(
      'UNKNOWN_PARAMETER',
      `Unknown ${location} parameter: ${unknown.join(', ')}`,
      {
        errors: unknown.map((field) => ({
          location,
          field,
          message: `${field} is not a known parameter`,
        })),
      },
    );
  }
  const errors = error.issues.map((i) => ({
    location,
    field: i.path.join('.') || location,
    message:
      i.path.length > 0 && !i.message.startsWith(String(i.path.at(-1)))
        ? `${i.path.join('.')}: ${i.message}`
        : i.message,
  }));
  return new GatewayError('VALIDATION_FAILED', errors.map((e) => e.message).join('; '), { errors });
}

/**
 * Requests with a body must say application/json. zValidator alone would
 * read any other content type as `{}`, hiding the caller's mistake behind a
 * misleading "field required".
 */
export function requireJson() {
  return createMiddleware<HonoEnv>(async function requireJson(c, next) {
    const type = c.req.header('content-type')?.split(';')[0]?.trim().toLowerCase();
    if (type !== 'application/json') throw new GatewayError('UNSUPPORTED_MEDIA_TYPE');
    await next();
  });
}
