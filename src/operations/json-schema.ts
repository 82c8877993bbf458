/**
 * An operator's JSON Schema (PLATFORM_OPERATIONS, ROUTE_OVERRIDES) made into the
 * zod schema validation runs, once, when settings parse. zod 4's own
 * `z.fromJSONSchema` does the converting: it runs in workerd (no code generation),
 * adds little to the bundle next to the zod already in it, and keeps one validator
 * for built-in and declared operations alike. What it leaves open is done here:
 *
 * - query and path values travel as text, so each is a scalar (string, integer,
 *   number, boolean) read from its text first;
 * - the top level refuses names it does not list (40003), as built-in operations
 *   do, unless the schema sets `additionalProperties` itself;
 * - anything it cannot convert (`not`, `if`, an external `$ref`) is a settings error
 *   that names the field;
 * - a `pattern` is taken only when it cannot backtrack badly (operations/pattern-check.ts)
 *   and its string has a `maxLength` of at most MAX_PATTERN_TEXT, which the pattern
 *   itself checks first (zod runs a pattern even on a text its maxLength refused);
 *   `patternProperties` are not taken.
 *
 * The schema as the operator wrote it rides along as the wire form
 * (operations/schemas.ts `WIRE`), which is what OpenAPI and /docs show.
 */
import * as z from 'zod';
import type { InputSchema } from '../types/operations';
import { patternProblem } from './pattern-check';
import { opaqueId, WIRE } from './schemas';

type Json = Record<string, unknown>;

/** Why a schema cannot be used, and where in it. */
export class SchemaProblem extends Error {
  constructor(
    readonly path: PropertyKey[],
    message: string,
  ) {
    super(message);
  }
}

const isObject = (v: unknown): v is Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A JSON body: an object schema, strict at the top unless it says otherwise. */
export function bodyFromJsonSchema(json: unknown): InputSchema {
  const top = objectSchema(json);
  const wire = { ...top, additionalProperties: top.additionalProperties ?? false };
  return asInput(converted(wire, []), wire);
}

/** Query parameters: each a scalar sent as text; only the names it lists. */
export function queryFromJsonSchema(json: unknown): InputSchema {
  const top = objectSchema(json);
  if (top.additionalProperties !== undefined && top.additionalProperties !== false) {
    throw new SchemaProblem(
      ['additionalProperties'],
      'must be false or left out: a query parameter the schema does not name is refused',
    );
  }
  return textFields(top, new Set(requiredNames(top)));
}

/**
 * Path parameters: exactly the path's placeholders, each required. Without a schema, each
 * is an opaque id (1 to 128 letters, digits or _ - . :), as for built-in operations.
 */
export function paramsFromJsonSchema(json: unknown, placeholders: string[]): InputSchema {
  if (json === undefined) {
    return z.strictObject(Object.fromEntries(placeholders.map((name) => [name, opaqueId(name)])));
  }
  const top = objectSchema(json);
  const named = Object.keys(isObject(top.properties) ? top.properties : {});
  const missing = placeholders.filter((p) => !named.includes(p));
  const extra = named.filter((n) => !placeholders.includes(n));
  if (missing.length > 0 || extra.length > 0) {
    throw new SchemaProblem(
      ['properties'],
      `must name exactly the path's placeholders (${placeholders.join(', ') || 'none'})`,
    );
  }
  return textFields(top, new Set(placeholders), { pathValues: true });
}

/**
 * Whether a path value is, or decodes to, a `.` or `..` segment: `..`, `%2e%2e`, `..%2F`,
 * `.%252e`, `..;x` (a server that drops `;` parameters reads `..`). Sent on, it would move
 * the call to another platform path, whichever server decodes it, however often.
 */
export function hasDotSegment(value: string): boolean {
  let text = value;
  for (let round = 0; round < 4; round++) {
    if (text.split(/[/\\]/).some((segment) => /^\.\.?(;.*)?$/.test(segment))) return true;
    const decoded = text.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) =>
      String.fromCharCode(Number.parseInt(hex, 16)),
    );
    if (decoded === text) return false;
    text = decoded;
  }
  // Still decoding after four rounds: no honest id is encoded that deep.
  return true;
}

/** The top of every schema: an object, with `properties` that are schemas. */
function objectSchema(json: unknown): Json {
  if (!isObject(json)) throw new SchemaProblem([], 'must be a JSON Schema object');
  if (json.type !== undefined && json.type !== 'object') {
    throw new SchemaProblem(['type'], 'must be "object"');
  }
  if (json.properties !== undefined && !isObject(json.properties)) {
    throw new SchemaProblem(['properties'], 'must be an object of schemas');
  }
  requiredNames(json);
  return json;
}

function requiredNames(json: Json): string[] {
  const required = json.required ?? [];
  const names = Object.keys(isObject(json.properties) ? json.properties : {});
  if (!Array.isArray(required) || required.some((r) => typeof r !== 'string')) {
    throw new SchemaProblem(['required'], 'must be a list of property names');
  }
  const unknown = required.filter((r) => !names.includes(r));
  if (unknown.length > 0) {
    throw new SchemaProblem(['required'], `names no property: ${unknown.join(', ')}`);
  }
  return required;
}

/** z.fromJSONSchema, its refusals turned into a problem at `path`. */
function converted(json: unknown, path: PropertyKey[]): z.ZodType {
  exactIntegers(json, path);
  const ready = mapSchemas(json, path, (schema, at) => boundedPattern(typedObject(schema), at));
  try {
    return z.fromJSONSchema(ready as z.core.JSONSchema.JSONSchema);
  } catch (err) {
    throw new SchemaProblem(path, err instanceof Error ? err.message : 'cannot be converted');
  }
}

/** The longest text a declared `pattern` may run on (its string's maxLength): docs/BOUNDS.md. */
export const MAX_PATTERN_TEXT = 1024;

/**
 * A schema's `pattern`, checked (it cannot backtrack badly, its string is bounded) and
 * made to check that bound itself before anything else runs.
 */
function boundedPattern(schema: Json, path: PropertyKey[]): Json {
  if (schema.patternProperties !== undefined) {
    throw new SchemaProblem(
      [...path, 'patternProperties'],
      'is not taken: property names cannot be bounded before a pattern runs on them; name the properties',
    );
  }
  const { pattern, maxLength } = schema;
  if (typeof pattern !== 'string') return schema;
  try {
    new RegExp(pattern);
  } catch (err) {
    throw new SchemaProblem([...path, 'pattern'], `is not a regular expression: ${String(err)}`);
  }
  if (!Number.isInteger(maxLength) || (maxLength as number) > MAX_PATTERN_TEXT) {
    throw new SchemaProblem(
      [...path, 'maxLength'],
      `must be given, at most ${MAX_PATTERN_TEXT}, with a pattern: a text is bounded before a pattern runs on it`,
    );
  }
  const problem = patternProblem(pattern);
  if (problem) throw new SchemaProblem([...path, 'pattern'], problem);
  return { ...schema, pattern: `${GUARD_START}${maxLength}${GUARD_END}${pattern})` };
}

/** A bound on the whole text, then the pattern anywhere in it (JSON Schema patterns are not anchored). */
const GUARD_START = '^(?=[\\s\\S]{0,';
const GUARD_END = '}$)[\\s\\S]*?(?:';
const GUARDED = /^\/\^\(\?=\[\\s\\S\]\{0,\d+\}\$\)\[\\s\\S\]\*\?\(\?:([\s\S]*)\)\/$/;

/** A pattern as its operator wrote it, from zod's `/…/` of the one that runs. */
const operatorPattern = (shown: string) => {
  const inner = GUARDED.exec(shown)?.[1];
  return inner === undefined ? shown : `/${inner}/`;
};

/** Keywords whose values are schemas, and those whose values are lists or maps of them. */
const SUBSCHEMA = ['additionalProperties', 'items', 'not', 'contains', 'propertyNames'];
const SUBSCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'];
const SUBSCHEMA_MAPS = ['properties', 'patternProperties', '$defs', 'definitions'];
const OBJECT_KEYWORDS = ['properties', 'required', 'additionalProperties', 'patternProperties'];

/**
 * The schema with `"type": "object"` where object keywords stand without a type: z.fromJSONSchema
 * ignores `properties` and `required` there, so nothing would be checked (the wire form keeps
 * the operator's text).
 */
function typedObject(schema: Json): Json {
  const objectish = schema.type === undefined && OBJECT_KEYWORDS.some((k) => k in schema);
  return objectish ? { ...schema, type: 'object' } : schema;
}

/** A copy of the schema with `fn` applied to it and to every schema inside it, each with its path. */
function mapSchemas(
  json: unknown,
  path: PropertyKey[],
  fn: (schema: Json, path: PropertyKey[]) => Json,
): unknown {
  if (!isObject(json)) return json;
  const out: Json = { ...fn(json, path) };
  for (const k of SUBSCHEMA) {
    if (isObject(out[k])) out[k] = mapSchemas(out[k], [...path, k], fn);
  }
  for (const k of SUBSCHEMA_LISTS) {
    const list = out[k];
    if (Array.isArray(list)) out[k] = list.map((v, i) => mapSchemas(v, [...path, k, i], fn));
  }
  for (const k of SUBSCHEMA_MAPS) {
    const map = out[k];
    if (isObject(map)) {
      out[k] = Object.fromEntries(
        Object.entries(map).map(([n, v]) => [n, mapSchemas(v, [...path, k, n], fn)]),
      );
    }
  }
  return out;
}

/**
 * Refuses an integer past 2^53 - 1 anywhere in a schema (a bound, an enum, a default):
 * JSON numbers are doubles, so the settings' parse has rounded it already, and a bound
 * that large would also lift zod's own refusal of integers it cannot hold exactly.
 */
function exactIntegers(json: unknown, path: PropertyKey[]): void {
  if (typeof json === 'number' && Number.isInteger(json) && !Number.isSafeInteger(json)) {
    throw new SchemaProblem(
      path,
      `must be from -${Number.MAX_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}: a JSON number past that is not exact (send such values as strings)`,
    );
  }
  if (Array.isArray(json) || isObject(json)) {
    for (const [k, v] of Object.entries(json)) exactIntegers(v, [...path, k]);
  }
}

const asInput = (schema: z.ZodType, wire: Json): InputSchema =>
  (schema as InputSchema).meta({ [WIRE]: wire });

type Scalar = 'string' | 'integer' | 'number' | 'boolean';

/** The scalar a query or path value's schema describes, or a problem. */
function scalarOf(schema: Json, path: PropertyKey[]): Scalar {
  const { type } = schema;
  if (type === 'string' || type === 'integer' || type === 'number' || type === 'boolean') {
    return type;
  }
  if (type === undefined && Array.isArray(schema.enum) && schema.enum.length > 0) {
    if (schema.enum.every((v) => typeof v === 'string')) return 'string';
    if (schema.enum.every((v) => Number.isInteger(v))) return 'integer';
    if (schema.enum.every((v) => typeof v === 'number')) return 'number';
  }
  throw new SchemaProblem(
    path,
    'must be a string, integer, number or boolean schema: query and path values are text',
  );
}

/** Numbers read from text must be held exactly: at most 2^53 - 1 either way. */
const EXACT = `from -${Number.MAX_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}`;
const exact = (v: unknown) => Math.abs(v as number) <= Number.MAX_SAFE_INTEGER;

/** How each scalar is read from its text; anything else is refused before its schema runs. */
const READ: Record<
  Scalar,
  {
    pattern: RegExp;
    says: string;
    read: (text: string) => unknown;
    holds?: (v: unknown) => boolean;
  }
> = {
  string: { pattern: /^[\s\S]*$/, says: 'a string', read: (t) => t },
  integer: { pattern: /^-?\d{1,16}$/, says: `an integer ${EXACT}`, read: Number, holds: exact },
  number: {
    pattern: /^-?\d{1,16}(\.\d{1,16})?$/,
    says: `a number ${EXACT}`,
    read: Number,
    holds: exact,
  },
  boolean: { pattern: /^(true|false)$/, says: 'true or false', read: (t) => t === 'true' },
};

/**
 * An object of scalar fields sent as text: read each, then check it with its own schema.
 * Path values (`pathValues`) must also not be or carry a `.` or `..` segment.
 */
function textFields(top: Json, required: Set<string>, { pathValues = false } = {}): InputSchema {
  const properties = isObject(top.properties) ? top.properties : {};
  const shape: Record<string, z.ZodType> = {};
  for (const [name, schema] of Object.entries(properties)) {
    const path = ['properties', name];
    if (!isObject(schema)) throw new SchemaProblem(path, 'must be a schema object');
    const scalar = scalarOf(schema, path);
    const { default: fallback, ...rest } = schema;
    const typed = converted({ ...rest, ...(rest.type ? {} : { type: scalar }) }, path);
    const how = READ[scalar];
    const error = (issue: { input?: unknown }) =>
      issue.input === undefined ? `${name} is required` : `${name} must be ${how.says}`;
    const text = z.string({ error }).regex(how.pattern, { error });
    const segment = `${name} must not be . or .. nor carry one, encoded or not: it would change the platform path`;
    const safe = pathValues ? text.refine((t) => !hasDotSegment(t), { error: segment }) : text;
    const read = safe.transform(how.read);
    let field: z.ZodType = (how.holds ? read.refine(how.holds, { error }) : read).pipe(typed);
    if (fallback !== undefined) {
      if (!typed.safeParse(fallback).success) {
        throw new SchemaProblem([...path, 'default'], 'does not satisfy its own schema');
      }
      field = field.default(fallback);
    } else if (!required.has(name)) {
      field = field.optional();
    }
    shape[name] = field;
  }
  return asInput(z.strictObject(shape), { ...top, additionalProperties: false });
}

/**
 * Readable messages for what a converted schema refuses, for parses of operators' schemas
 * (built-in ones bring their own): validate.ts puts the field's name in front.
 */
export function describeIssue(issue: z.core.$ZodRawIssue): string | undefined {
  switch (issue.code) {
    case 'invalid_type':
      return issue.input === undefined
        ? 'is required'
        : `must be ${KINDS[issue.expected] ?? issue.expected}`;
    case 'too_big':
      return `must be at most ${String(issue.maximum)}${UNITS[issue.origin] ?? ''}`;
    case 'too_small':
      return `must be at least ${String(issue.minimum)}${UNITS[issue.origin] ?? ''}`;
    case 'invalid_format':
      return issue.format === 'regex' && 'pattern' in issue
        ? `must match ${operatorPattern(String(issue.pattern))}`
        : `must be a valid ${issue.format}`;
    case 'invalid_value':
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}`;
    default:
      return undefined;
  }
}

const KINDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  null: 'null',
};

const UNITS: Record<string, string> = {
  string: ' characters',
  array: ' items',
  set: ' items',
  object: ' fields',
};
