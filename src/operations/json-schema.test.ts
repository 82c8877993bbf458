import { describe, expect, it } from 'vitest';
import { overlaps } from './declared';
import {
  bodyFromJsonSchema,
  describeIssue,
  hasDotSegment,
  MAX_PATTERN_TEXT,
  paramsFromJsonSchema,
  queryFromJsonSchema,
  SchemaProblem,
} from './json-schema';

const parse = (schema: ReturnType<typeof queryFromJsonSchema>, value: unknown) =>
  schema.safeParse(value, { error: describeIssue });

describe('query and path values: scalars read from their text', () => {
  const query = queryFromJsonSchema({
    type: 'object',
    properties: {
      n: { type: 'integer', minimum: 1, maximum: 5, default: 2 },
      x: { type: 'number' },
      on: { type: 'boolean' },
      kind: { enum: ['a', 'b'] },
      q: { type: 'string', maxLength: 3 },
    },
    required: ['q'],
  });

  it('reads each as its type, applies defaults, refuses the rest', () => {
    expect(parse(query, { q: 'abc', x: '1.5', on: 'true', kind: 'b' }).data).toEqual({
      q: 'abc',
      n: 2,
      x: 1.5,
      on: true,
      kind: 'b',
    });
    for (const bad of [
      { q: 'abcd' },
      { q: 'a', n: '6' },
      { q: 'a', n: '1.5' },
      { q: 'a', on: 'yes' },
      { q: 'a', kind: 'c' },
      { q: 'a', other: '1' },
      { n: '1' },
    ]) {
      expect(parse(query, bad).success, JSON.stringify(bad)).toBe(false);
    }
  });

  it('names the bound in its message', () => {
    const issue = parse(query, { q: 'a', n: '9' }).error?.issues[0];
    expect(issue?.message).toBe('must be at most 5');
    expect(parse(query, {}).error?.issues[0]?.message).toBe('q is required');
  });

  it('refuses what cannot travel as text, and defaults that break their own schema', () => {
    const problem = (json: unknown) => {
      try {
        queryFromJsonSchema(json);
      } catch (err) {
        if (err instanceof SchemaProblem) return `${err.path.join('.')}: ${err.message}`;
        throw err;
      }
      return null;
    };
    expect(problem({ properties: { a: { type: 'array' } } })).toMatch(
      /^properties\.a: must be a string/,
    );
    expect(problem({ properties: { a: { type: 'integer', maximum: 3, default: 9 } } })).toBe(
      'properties.a.default: does not satisfy its own schema',
    );
    expect(problem({ additionalProperties: true })).toMatch(/^additionalProperties: must be false/);
    expect(problem({ type: 'string' })).toBe('type: must be "object"');
    expect(problem({ properties: {}, required: ['ghost'] })).toBe(
      'required: names no property: ghost',
    );
  });

  it('path parameters: exactly the placeholders, opaque ids without a schema', () => {
    const params = paramsFromJsonSchema(undefined, ['id']);
    expect(params.safeParse({ id: 'prod_1' }).success).toBe(true);
    expect(params.safeParse({ id: '../x' }).success).toBe(false);
    expect(() =>
      paramsFromJsonSchema({ properties: { other: { type: 'string' } } }, ['id']),
    ).toThrow(SchemaProblem);
  });
});

describe('numbers past 2^53 - 1, which JSON cannot hold exactly', () => {
  const problem = (make: () => unknown) => {
    try {
      make();
    } catch (err) {
      if (err instanceof SchemaProblem) return `${err.path.join('.')}: ${err.message}`;
      throw err;
    }
    return null;
  };

  it("are refused in an operator's schema, naming where", () => {
    // As the settings' JSON.parse gives it: already rounded to 100000000000000000.
    const big = JSON.parse('{"type": "integer", "maximum": 99999999999999999}');
    expect(problem(() => bodyFromJsonSchema({ properties: { n: big } }))).toMatch(
      /^properties\.n\.maximum: must be from -9007199254740991 to 9007199254740991/,
    );
    expect(problem(() => queryFromJsonSchema({ properties: { n: big } }))).toMatch(
      /^properties\.n\.maximum: must be from/,
    );
    expect(
      problem(() => bodyFromJsonSchema({ properties: { k: { enum: [1, 2 ** 60] } } })),
    ).toMatch(/^properties\.k\.enum\.1: must be from/);
    // The largest exact integer is fine, and then zod still refuses larger values.
    const body = bodyFromJsonSchema({
      type: 'object',
      properties: { n: { type: 'integer', maximum: Number.MAX_SAFE_INTEGER } },
    });
    expect(body.safeParse({ n: Number.MAX_SAFE_INTEGER }).success).toBe(true);
    expect(body.safeParse({ n: 2 ** 60 }).success).toBe(false);
  });

  it('are refused as query values, saying the range, not rounded', () => {
    const q = queryFromJsonSchema({ properties: { x: { type: 'number' } } });
    expect(parse(q, { x: '9007199254740991' }).data).toEqual({ x: 9007199254740991 });
    const refused = parse(q, { x: '9999999999999999.5' });
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]?.message).toBe(
      'x must be a number from -9007199254740991 to 9007199254740991',
    );
  });
});

describe('JSON bodies', () => {
  it('are strict at the top unless the schema says otherwise; nested objects follow it', () => {
    const strict = bodyFromJsonSchema({
      type: 'object',
      properties: { a: { type: 'object', properties: { b: { type: 'string' } } } },
    });
    expect(strict.safeParse({ a: { b: 'x', c: 1 } }).success).toBe(true);
    expect(strict.safeParse({ a: {}, z: 1 }).error?.issues[0]?.code).toBe('unrecognized_keys');
    const open = bodyFromJsonSchema({ type: 'object', additionalProperties: true });
    expect(open.safeParse({ anything: 1 }).success).toBe(true);
  });

  it('are checked where object keywords stand without "type": "object", at the top and inside', () => {
    const body = bodyFromJsonSchema({
      properties: {
        a: { properties: { b: { type: 'string' } }, required: ['b'] },
        list: { type: 'array', items: { properties: { c: { type: 'integer' } } } },
      },
      required: ['a'],
    });
    expect(body.safeParse({ a: { b: 'x' }, list: [{ c: 1 }] }).success).toBe(true);
    for (const bad of [
      {},
      { a: {} },
      { a: { b: 1 } },
      { a: { b: 'x' }, z: 1 },
      { a: { b: 'x' }, list: [{ c: 'x' }] },
    ]) {
      expect(body.safeParse(bad).success, JSON.stringify(bad)).toBe(false);
    }
  });

  it("turns zod's refusals into a problem at the schema's path", () => {
    expect(() => bodyFromJsonSchema({ type: 'object', if: {} })).toThrow(/not supported/);
  });
});

describe('overlaps', () => {
  it.each([
    ['/a/:x', '/a/b', true],
    ['/a/:x/c', '/a/b/d', false],
    ['/a', '/a/*', true],
    ['/a/b/c', '/a/*', true],
    ['/b', '/a/*', false],
    ['/a/b', '/a/b/c', false],
    ['/session/info/:id', '/session/info/:session_id', true],
  ])('%s and %s: %s', (a, b, expected) => {
    expect(overlaps(a, b)).toBe(expected);
  });
});

describe('path values and dot segments', () => {
  it.each([
    '..',
    '.',
    '%2e%2e',
    '.%2E',
    '..%2F',
    'a%2F..%2Fb',
    '..%5c',
    'a/../b',
    '..;x',
    '%252e%252e',
    '%25252e%25252e',
    '%2525252525252e',
  ])('%s is or decodes to one', (value) => {
    expect(hasDotSegment(value)).toBe(true);
  });

  it.each(['...', 'v1.2..3', 'a.b', '..x', 'x..', '%2e%2ex', 'a%20b', '%zz'])(
    '%s is not',
    (value) => {
      expect(hasDotSegment(value)).toBe(false);
    },
  );

  it('a declared path parameter typed only as a string refuses them, naming it', () => {
    const params = paramsFromJsonSchema(
      { type: 'object', properties: { id: { type: 'string' } } },
      ['id'],
    );
    const refused = parse(params, { id: '../admin' });
    expect(refused.error?.issues[0]?.message).toBe(
      'id must not be . or .. nor carry one, encoded or not: it would change the platform path',
    );
    expect(parse(params, { id: 'a.b' }).data).toEqual({ id: 'a.b' });
  });
});

describe('declared patterns', () => {
  const problemOf = (build: () => unknown): SchemaProblem => {
    try {
      build();
    } catch (err) {
      if (err instanceof SchemaProblem) return err;
      throw err;
    }
    throw new Error('no problem found');
  };
  const nameWith = (name: Record<string, unknown>) => () =>
    bodyFromJsonSchema({ type: 'object', properties: { name } });

  it('refuses one that can backtrack catastrophically, saying why and where', () => {
    const problem = problemOf(nameWith({ type: 'string', maxLength: 30, pattern: '(a+)+$' }));
    expect(problem.path).toEqual(['properties', 'name', 'pattern']);
    expect(problem.message).toMatch(/^can backtrack catastrophically/);
    // Anywhere in the schema: in a list's items, in an anyOf, in $defs.
    const nested = problemOf(() =>
      bodyFromJsonSchema({
        type: 'object',
        properties: {
          tags: {
            type: 'array',
            items: { anyOf: [{ type: 'string', maxLength: 9, pattern: '^(a|a)*$' }] },
          },
        },
      }),
    );
    expect(nested.path).toEqual(['properties', 'tags', 'items', 'anyOf', 0, 'pattern']);
  });

  it('needs a maxLength of at most MAX_PATTERN_TEXT with a pattern, and refuses patternProperties', () => {
    for (const maxLength of [undefined, MAX_PATTERN_TEXT + 1]) {
      const problem = problemOf(nameWith({ type: 'string', maxLength, pattern: '^[a-z]+$' }));
      expect(problem.path).toEqual(['properties', 'name', 'maxLength']);
      expect(problem.message).toContain(`at most ${MAX_PATTERN_TEXT}, with a pattern`);
    }
    const keyed = problemOf(() =>
      bodyFromJsonSchema({ type: 'object', patternProperties: { '^x': { type: 'string' } } }),
    );
    expect(keyed.path).toEqual(['patternProperties']);
  });

  it('runs one it takes, and names it as written when a value does not match', () => {
    const query = queryFromJsonSchema({
      type: 'object',
      properties: { slug: { type: 'string', maxLength: 64, pattern: '^[a-z0-9]+(-[a-z0-9]+)*$' } },
    });
    expect(parse(query, { slug: 'red-widget-2' }).data).toEqual({ slug: 'red-widget-2' });
    const refused = parse(query, { slug: 'red--widget' });
    expect(refused.error?.issues[0]?.message).toBe('must match /^[a-z0-9]+(-[a-z0-9]+)*$/');
  });

  it('bounds the text before the pattern runs: a million characters are refused for their length', () => {
    // Unanchored, `[a-z]*[0-9]` tries every start: a million letters would take half an hour.
    const body = bodyFromJsonSchema({
      type: 'object',
      properties: { code: { type: 'string', maxLength: 64, pattern: '[a-z]*[0-9]' } },
    });
    expect(parse(body, { code: 'abc1' }).success).toBe(true);
    const refused = parse(body, { code: 'a'.repeat(1_000_000) });
    expect(refused.error?.issues.map((i) => i.message)).toEqual([
      'must be at most 64 characters',
      'must match /[a-z]*[0-9]/',
    ]);
  });
});
