import { describe, expect, it } from 'vitest';
import { overlaps } from './declared';
import {
  bodyFromJsonSchema,
  describeIssue,
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
