/**
 * Field schemas shared by the operation table. Each carries a message that names
 * the field and its bound, because that text is what the caller reads.
 */
import * as z from 'zod';
import { PAGE_NUM_MAX, PAGE_SIZE_MAX, PAGE_SIZE_MIN } from './bounds';

export { PAGE_SIZE_MAX };

/** zod error option: "<name> is required" when absent, else the bound. */
const says = (name: string, bound: string) => ({
  error: (issue: { input?: unknown }) =>
    issue.input === undefined ? `${name} is required` : bound,
});

/**
 * How a field looks on the wire, for the OpenAPI document (openapi/document.ts)
 * where its zod schema alone cannot say it (an integer sent as query text).
 */
export const WIRE = 'x-wire';

/** A decimal integer query value within [min, max]. */
export function intField(name: string, min: number, max: number) {
  const error = says(name, `${name} must be an integer from ${min} to ${max}`);
  return z
    .string(error)
    .regex(/^\d{1,16}$/, error)
    .transform(Number)
    .refine((n) => n >= min && n <= max, error)
    .meta({ [WIRE]: { type: 'integer', minimum: min, maximum: max } });
}

/**
 * An intField that may be left out. zod's JSON Schema drops a default it cannot
 * show as input (a number for query text), so the wire form carries it.
 */
export function intFieldOr(name: string, min: number, max: number, fallback: number) {
  return intField(name, min, max)
    .default(fallback)
    .meta({ [WIRE]: { type: 'integer', minimum: min, maximum: max, default: fallback } });
}

export const pageNum = () => intFieldOr('page_num', 1, PAGE_NUM_MAX, 1);
export const pageSize = (fallback: number) =>
  intFieldOr('page_size', PAGE_SIZE_MIN, PAGE_SIZE_MAX, fallback);

export function enumField<const T extends readonly [string, ...string[]]>(name: string, values: T) {
  return z.enum(values, says(name, `${name} must be one of ${values.join(', ')}`));
}

export function textField(name: string, max: number, min = 0) {
  const error = says(name, `${name} must be a string of ${min} to ${max} characters`);
  return z.string(error).min(min, error).max(max, error);
}

/**
 * A name people read (tenants, tokens): no control characters (terminal
 * escapes) and no format characters (bidi overrides, zero-width), which can
 * make a listing show something other than what is stored.
 */
export function nameField(name: string, max: number) {
  return textField(name, max, 1).regex(
    /^[^\p{Cc}\p{Cf}]*$/u,
    `${name} must not contain control characters or format characters (bidi, zero-width)`,
  );
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const uuidField = (name: string) => {
  const error = says(name, `${name} must be a UUID`);
  return z
    .string(error)
    .regex(UUID, error)
    .meta({ [WIRE]: { type: 'string', format: 'uuid' } });
};

/** Ids the platform leaves opaque: a safe charset, so nothing can escape the path. */
export const opaqueId = (name: string) => {
  const error = says(
    name,
    `${name} must be 1 to 128 letters, digits or _ - . : (not starting with .)`,
  );
  return z.string(error).regex(/^[A-Za-z0-9_:-][A-Za-z0-9_.:-]{0,127}$/, error);
};

/** A short name such as a session kind (`marketing`): 1 to `max` letters, digits, _ or -. */
export function wordField(name: string, max = 32) {
  const error = says(name, `${name} must be 1 to ${max} letters, digits, _ or -`);
  return z.string(error).regex(new RegExp(`^[A-Za-z0-9_-]{1,${max}}$`), error);
}

/** An http(s) URL of at most 2048 characters (a file the platform stored, a link). */
export function urlField(name: string) {
  const error = says(name, `${name} must be an http(s) URL of at most 2048 characters`);
  return z
    .string(error)
    .max(2048, error)
    .regex(/^https?:\/\/[^\s]+$/i, error)
    .meta({ [WIRE]: { type: 'string', format: 'uri', maxLength: 2048 } });
}

/**
 * A free-form JSON object the platform reads (session.create's `extra`): an object, not
 * an array or null, at most `maxChars` characters as JSON and `maxDepth` levels deep.
 */
export function jsonObjectField(name: string, maxChars: number, maxDepth: number) {
  const bound = `${name} must be a JSON object of at most ${maxChars} characters and ${maxDepth} levels`;
  return z
    .record(z.string(), z.unknown(), says(name, bound))
    .refine(
      (value) => nestsAtMost(value, maxDepth) && JSON.stringify(value).length <= maxChars,
      bound,
    )
    .meta({ [WIRE]: { type: 'object', description: bound } });
}

/** Whether a JSON value nests objects and arrays at most `max` levels (a flat object is 1). */
function nestsAtMost(value: unknown, max: number): boolean {
  let level: unknown[] = [value];
  for (let depth = 1; ; depth++) {
    const containers = level.filter((v) => typeof v === 'object' && v !== null);
    if (containers.length === 0) return true;
    if (depth > max) return false;
    level = containers.flatMap((v) => Object.values(v as object));
  }
}

/** `YYYY-MM-DD` that names a real calendar day. */
export function dateField(name: string) {
  const error = says(name, `${name} must be a real calendar date in YYYY-MM-DD form`);
  return z
    .string(error)
    .regex(/^\d{4}-\d{2}-\d{2}$/, error)
    .refine((s) => {
      const d = new Date(`${s}T00:00:00Z`);
      return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
    }, error)
    .meta({ [WIRE]: { type: 'string', format: 'date' } });
}

/** ISO 8601 date-time with a zone (Z or an offset). */
export function dateTimeField(name: string) {
  return z.iso.datetime({
    offset: true,
    ...says(
      name,
      `${name} must be an ISO 8601 date-time with a time zone, e.g. 2026-11-01T08:00:00Z`,
    ),
  });
}

/** Refuses `later` < `earlier` when both are present; compares as instants. */
export function orderedPair(earlier: string, later: string) {
  return (value: Record<string, unknown>, ctx: z.RefinementCtx) => {
    const a = value[earlier];
    const b = value[later];
    if (typeof a === 'string' && typeof b === 'string' && Date.parse(a) > Date.parse(b)) {
      ctx.addIssue({
        code: 'custom',
        path: [later],
        message: `${later} must not be before ${earlier}`,
      });
    }
  };
}

export const noQuery = () => z.strictObject({});

/** A browser origin: scheme://host[:port], no path, lower-cased; at most 253 characters. */
export const originField = (name = 'origin') =>
  z
    .string()
    .max(253, `${name} must be at most 253 characters`)
    .regex(
      /^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/,
      `${name} must be scheme://host[:port], without a path`,
    )
    .transform((o) => o.toLowerCase());
