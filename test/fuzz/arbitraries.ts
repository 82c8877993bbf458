/**
 * Case generation for the fuzzing suite: a valid request for any route of the
 * table (values drawn from the model's bounds, in varied but equivalent wire
 * forms), optionally mutated into an invalid one, together with what the
 * gateway must do with it.
 */
import fc from 'fast-check';
import { ERRORS } from '../../src/errors';
import { BUILT_IN_OPERATIONS } from '../../src/operations/table';
import type { PlatformOperation } from '../../src/types/operations';
import { type Field, INT_MAX, MAX_DIGITS, MODELS, type RouteModel, UNFUZZED } from './model';

type G = fc.GeneratorValue;

/** What the tests know at run time: secrets to present (or never see) and calls.filter_values' states. */
export interface FuzzContext {
  token: string;
  readOnlyToken: string;
  adminToken: string;
  platformKey: string;
  /** A well-formed gateway token that no tenant has. */
  unknownToken: string;
  states: string[];
}

/** What the gateway must send upstream for a valid request. */
export interface Forwarded {
  path: string;
  query: Record<string, string>;
  body: Record<string, unknown> | null;
}

export type Expectation =
  | {
      kind: 'valid';
      forwarded: Forwarded;
      /** Cacheable and not bypassed: the read cache may answer without the platform. */
      cacheKey: string | null;
    }
  | { kind: 'invalid'; codes: number[] };

export type RequestIdForm = 'plain' | 'symbols' | 'longest' | 'too-long' | 'bad-char' | 'empty';

export interface CasePlan {
  route: string;
  method: string;
  path: string;
  /** Raw query string, without `?`. */
  query: string;
  headers: [string, string][];
  body?: string;
  requestId: RequestIdForm;
  /** calls.list with a status reads calls.filter_values' states through the cache under this request's id. */
  readsStates: boolean;
  mutations: string[];
  expect: Expectation;
}

const code = (kind: keyof typeof ERRORS) => ERRORS[kind].code;
const VALIDATION = code('VALIDATION_FAILED');

// ---------------------------------------------------------------- helpers

const pick = <T>(g: G, xs: readonly T[]): T => {
  if (xs.length === 0) throw new Error('pick from an empty list');
  return g(() => fc.constantFrom(...xs));
};
const int = (g: G, min: number, max: number) => g(fc.integer, { min, max });
const chance = (g: G, percent: number) => int(g, 0, 99) < percent;

const HEX = '0123456789abcdef';
const OPAQUE_FIRST = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_:-';
const OPAQUE_REST = `${OPAQUE_FIRST}.`;

/** Characters that stress encoding: reserved, percent, plus, unicode, controls, astral. */
const TEXT_CHARS = [
  'a',
  'Z',
  '7',
  ' ',
  '-',
  '_',
  '.',
  '~',
  '%',
  '%25',
  '+',
  '&',
  '=',
  '#',
  '?',
  '/',
  '\\',
  "'",
  '"',
  '<',
  ';',
  ',',
  'é',
  'ß',
  '日本',
  '😀',
  '👩‍💻',
  '\u0000',
  '\n',
  '\t',
  '\u200b',
  '\ufeff',
  '\u202e',
  'ｆ',
];
/** Only inside JSON, where an escape carries them: lone surrogates. */
const BODY_ONLY_CHARS = ['\ud800', '\udfff'];

/** Every UTF-8 byte as %XX, letters included: an over-encoded but equivalent form. */
function overEncode(s: string, lower: boolean): string {
  let out = '';
  for (const byte of new TextEncoder().encode(s)) {
    const hex = byte.toString(16).padStart(2, '0');
    out += `%${lower ? hex : hex.toUpperCase()}`;
  }
  return out;
}

/** Text of `min..max` UTF-16 units (what zod counts), built from a short random pattern. */
function textOf(g: G, min: number, max: number, inBody: boolean): string {
  const hi = Math.min(max, min + 300);
  const length = pick(g, [
    min,
    max,
    Math.min(min + 1, max),
    Math.max(max - 1, min),
    int(g, min, hi),
  ]);
  if (length === 0) return '';
  const chars = inBody ? [...TEXT_CHARS, ...BODY_ONLY_CHARS] : TEXT_CHARS;
  const pattern = g(() => fc.array(fc.constantFrom(...chars), { minLength: 1, maxLength: 6 }));
  let s = '';
  while (s.length < length) s += pattern.join('');
  // Trim by code points so no surrogate pair is split, then pad with ASCII.
  const points = [...s];
  while (points.join('').length > length) points.pop();
  s = points.join('');
  return s.padEnd(length, 'a');
}

function uuidOf(g: G): string {
  const digits = g(() =>
    fc.array(fc.constantFrom(...HEX, ...HEX.slice(10).toUpperCase()), {
      minLength: 32,
      maxLength: 32,
    }),
  ).join('');
  return `${digits.slice(0, 8)}-${digits.slice(8, 12)}-${digits.slice(12, 16)}-${digits.slice(16, 20)}-${digits.slice(20)}`;
}

function opaqueOf(g: G): string {
  const first = pick(g, [...OPAQUE_FIRST]);
  const restLength = pick(g, [0, 1, 5, 127, int(g, 0, 127)]);
  const rest = g(() =>
    fc.array(fc.constantFrom(...OPAQUE_REST), { minLength: restLength, maxLength: restLength }),
  );
  return first + rest.join('');
}

const pad2 = (n: number) => String(n).padStart(2, '0');
const DAY_MS = 86_400_000;

/** A real calendar day, years 0000..9999. */
function dateOf(g: G): string {
  const day = int(g, Date.parse('0000-01-01T00:00:00Z') / DAY_MS, Date.UTC(9999, 11, 31) / DAY_MS);
  const d = new Date(day * DAY_MS);
  return `${String(d.getUTCFullYear()).padStart(4, '0')}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}`;
}

/** An ISO 8601 date-time with a zone: Z or an offset, with or without a fraction. */
function dateTimeOf(g: G): string {
  const instant = int(g, Date.UTC(1000, 0, 2), Date.UTC(9998, 11, 30));
  const offsetMin = chance(g, 50) ? 0 : int(g, -14 * 4, 14 * 4) * 15;
  const local = new Date(instant + offsetMin * 60_000).toISOString().slice(0, 19);
  const ms = ((instant % 1000) + 1000) % 1000;
  const fraction = pick(g, ['none', 'ms', 'long']);
  const frac =
    fraction === 'none' || (fraction === 'ms' && ms === 0)
      ? ''
      : `.${String(ms).padStart(3, '0')}${fraction === 'long' ? '000000' : ''}`;
  const sign = offsetMin < 0 ? '-' : '+';
  const abs = Math.abs(offsetMin);
  const zone =
    offsetMin === 0 && chance(g, 70)
      ? 'Z'
      : `${sign}${pad2(Math.floor(abs / 60))}:${pad2(abs % 60)}`;
  // Without a fraction the instant is the whole second: order by what the string says.
  return `${local}${frac}${zone}`;
}

/** A value sent as it goes upstream. */
const same = (v: string) => ({ wire: v, forwarded: v });

/** A valid value for a field: its wire text and what goes upstream. */
function validValue(g: G, field: Field, ctx: FuzzContext, inBody: boolean) {
  const t = field.type;
  switch (t.kind) {
    case 'int': {
      const max = Math.min(t.max, INT_MAX);
      const n = pick(g, [
        t.min,
        max,
        t.min + 1,
        max - 1,
        int(g, t.min, Math.min(max, 200)),
        int(g, t.min, max),
      ]);
      const width = chance(g, 15) ? int(g, String(n).length, MAX_DIGITS) : 0;
      return { wire: String(n).padStart(width, '0'), forwarded: String(n) };
    }
    case 'enum':
      return same(pick(g, t.values));
    case 'text':
      return same(textOf(g, t.min, t.max, inBody));
    case 'date':
      return same(dateOf(g));
    case 'datetime':
      return same(dateTimeOf(g));
    case 'uuid':
      return same(uuidOf(g));
    case 'opaque':
      return same(opaqueOf(g));
    case 'state':
      return same(pick(g, ['', ...ctx.states]));
    case 'word':
      return same(wordOf(g));
    case 'json': {
      // Body values only: what goes upstream is the value itself.
      const value = pick(g, [...t.valid]);
      return { wire: JSON.stringify(value), forwarded: value as string };
    }
  }
}

const WORD_CHARS = [...'abcXYZ019_-'];

/** 1 to 32 letters, digits, _ or -. */
function wordOf(g: G): string {
  const length = pick(g, [1, 32, int(g, 1, 32)]);
  return g(() =>
    fc.array(fc.constantFrom(...WORD_CHARS), { minLength: length, maxLength: length }),
  ).join('');
}

/** An invalid value for a field (a 40001 on its own). */
function invalidValue(g: G, field: Field, valid: string, ctx: FuzzContext): string {
  const t = field.type;
  switch (t.kind) {
    case 'int':
      return pick(g, [
        ...(t.min > 0 ? [String(t.min - 1)] : []),
        t.max < INT_MAX ? String(t.max + 1 + int(g, 0, 1000)) : '1'.padStart(MAX_DIGITS + 1, '0'),
        // Past the largest exact integer but still within the digits the pattern allows.
        String(INT_MAX + 1),
        '9'.repeat(MAX_DIGITS),
        '9'.repeat(MAX_DIGITS + 1),
        '-1',
        '1.5',
        '1e3',
        '0x10',
        '+1',
        ' 1',
        '1 ',
        'abc',
        '',
        '１',
        '١',
        'NaN',
        'Infinity',
        '1,0',
        `${valid}%`,
        `${valid}%ZZ`,
      ]);
    case 'enum': {
      const v = pick(g, t.values);
      return pick(g, [
        v.toUpperCase(),
        ` ${v}`,
        `${v} `,
        `${v}\u0000`,
        v.slice(0, -1),
        '',
        '*',
        'unknown',
        `${v}%zz`,
      ]);
    }
    case 'text':
      return pick(g, [
        ...(t.min > 0 ? [''] : []),
        'x'.repeat(t.max + int(g, 1, 50)),
        `${'é'.repeat(t.max)}x`,
      ]);
    case 'word':
      return pick(g, ['', 'x'.repeat(33), 'a b', 'a.b', 'é', `${valid}/`]);
    case 'json':
      return JSON.stringify(pick(g, [...t.invalid]));
    case 'state': {
      const taken = new Set(ctx.states);
      const v = pick(g, [
        'cancelled',
        'unknown',
        'SUCCESS',
        `${ctx.states[0] ?? 's'} `,
        'x'.repeat(64),
      ]);
      return taken.has(v) ? `${v}-not` : v;
    }
    case 'date':
      return pick(g, [
        '2026-13-01',
        '2026-02-30',
        '2025-02-29',
        '2026-00-10',
        '2026-01-00',
        '2026-1-01',
        '26-01-01',
        '2026/01/01',
        '20260101',
        '2026-01-01T00:00:00Z',
        ' 2026-01-01',
        '２０２６-01-01',
        '',
        `${valid}%`,
      ]);
    case 'datetime':
      return pick(g, [
        '2026-01-01T00:00:00',
        '2026-01-01',
        '2026-01-01 00:00:00Z',
        '2026-02-30T00:00:00Z',
        '2026-01-01T24:00:00Z',
        '2026-01-01T00:00Z',
        '2026-01-01T00:00:00+0530',
        '2026-01-01t00:00:00z',
        '1767225600',
        'yesterday',
        '',
      ]);
    case 'uuid':
      return pick(g, [
        valid.replaceAll('-', ''),
        `${valid}0`,
        valid.slice(1),
        `g${valid.slice(1)}`,
        `{${valid}}`,
        `urn:uuid:${valid}`,
        ` ${valid}`,
        `${valid.slice(0, -1)}０`,
        'not-a-uuid',
      ]);
    case 'opaque':
      return pick(g, [
        `.${valid}`,
        `${valid}/x`,
        `${valid} x`,
        `${valid}é`,
        `${valid}\u0000`,
        `${valid}%`,
        `${valid}?x`,
        `${valid}#x`,
        '😀',
        'x'.repeat(129),
      ]);
  }
}

// ---------------------------------------------------------------- the draft request

type QueryStyle = 'component' | 'form' | 'over' | 'over-lower';

interface QueryPair {
  name: string;
  value: string;
  style: QueryStyle;
  /** Already-encoded text used verbatim (bad encodings). */
  raw?: string;
}

interface Draft {
  method: string;
  segments: string[];
  query: QueryPair[];
  separator: '&' | '&&';
  body?: { entries: [string, unknown][]; pretty: boolean; raw?: string };
  contentType?: string;
  auth: [string, string][];
  headers: [string, string][];
  readsStates: boolean;
}

function encodePart(s: string, style: QueryStyle): string {
  switch (style) {
    case 'component':
      return encodeURIComponent(s);
    case 'form':
      return encodeURIComponent(s).replaceAll('%20', '+');
    case 'over':
      return overEncode(s, false);
    case 'over-lower':
      return overEncode(s, true);
  }
}

function renderQuery(d: Draft): string {
  return d.query
    .map((p) => `${encodePart(p.name, p.style)}=${p.raw ?? encodePart(p.value, p.style)}`)
    .join(d.separator);
}

function renderBody(body: NonNullable<Draft['body']>): string {
  if (body.raw !== undefined) return body.raw;
  const sep = body.pretty ? ',\n  ' : ',';
  const colon = body.pretty ? ': ' : ':';
  const inner = body.entries.map(([k, v]) => `${JSON.stringify(k)}${colon}${JSON.stringify(v)}`);
  return body.pretty ? `{\n  ${inner.join(sep)}\n}` : `{${inner.join(sep)}}`;
}

/** Methods each gateway path answers. */
const METHODS_BY_PATH = new Map<string, string[]>();
for (const spec of BUILT_IN_OPERATIONS) {
  METHODS_BY_PATH.set(spec.path, [...(METHODS_BY_PATH.get(spec.path) ?? []), spec.method]);
}

// ---------------------------------------------------------------- valid requests

interface Built {
  draft: Draft;
  forwarded: Forwarded;
  paramValues: Record<string, string>;
  /** Which path segment each parameter is (not always the last: /…/{product_id}/info). */
  paramSegments: Record<string, number>;
}

function buildValid(g: G, spec: PlatformOperation, model: RouteModel, ctx: FuzzContext): Built {
  const paramValues: Record<string, string> = {};
  const paramSegments: Record<string, number> = {};
  const forwardedParams: Record<string, string> = {};
  const segments = spec.path
    .split('/')
    .slice(1)
    .map((segment, index) => {
      if (segment.startsWith(':')) {
        paramSegments[segment.slice(1)] = index;
        const field = model.params.find((f) => f.name === segment.slice(1));
        if (!field) throw new Error(`model lacks path parameter ${segment}`);
        const { wire, forwarded } = validValue(g, field, ctx, false);
        paramValues[field.name] = wire;
        forwardedParams[field.name] = forwarded;
        const form = pick(g, ['component', 'raw', 'over']);
        return form === 'over'
          ? overEncode(wire, chance(g, 50))
          : form === 'raw'
            ? wire
            : encodeURIComponent(wire);
      }
      // Now and then one letter of a static segment percent-encoded: the same path.
      if (chance(g, 8)) {
        const at = int(g, 0, segment.length - 1);
        return `${segment.slice(0, at)}${overEncode(segment.charAt(at), chance(g, 50))}${segment.slice(at + 1)}`;
      }
      return segment;
    });

  // Query: each optional field present or not, then in a random order.
  const query: QueryPair[] = [];
  const forwardedQuery: Record<string, string> = {};
  let readsStates = false;
  for (const field of model.query) {
    if (field.required || chance(g, 45)) {
      const { wire, forwarded } = validValue(g, field, ctx, false);
      query.push({
        name: field.name,
        value: wire,
        style: pick(g, ['component', 'form', 'over', 'over-lower']),
      });
      forwardedQuery[field.name] = forwarded;
      if (field.type.kind === 'state' && wire !== '') readsStates = true;
    } else if (field.default !== undefined) {
      forwardedQuery[field.name] = field.default;
    }
  }
  if (model.ordered) orderPair(query, forwardedQuery, model.ordered);
  const shuffled = g(() =>
    fc.shuffledSubarray(query, { minLength: query.length, maxLength: query.length }),
  );

  let body: Draft['body'];
  let forwardedBody: Record<string, unknown> | null = null;
  if (model.body) {
    const entries: [string, unknown][] = [];
    forwardedBody = {};
    // A body of several shapes is one of them: only its fields, its required ones always.
    const shape = model.shapes ? pick(g, model.shapes) : undefined;
    for (const field of model.body) {
      if (shape && !shape.fields.includes(field.name)) continue;
      const required = field.required || shape?.required.includes(field.name);
      const repeatsPath = field.name in paramValues;
      if (!(required || chance(g, 55))) {
        if (field.default !== undefined) forwardedBody[field.name] = field.default;
        continue;
      }
      const value = repeatsPath
        ? paramValues[field.name]
        : validValue(g, field, ctx, true).forwarded;
      entries.push([field.name, value]);
      forwardedBody[field.name] = value;
    }
    // session.create's earlier shape: the specification's empty task, sent explicitly.
    if (shape?.required.includes('team_id') && !('task' in forwardedBody)) forwardedBody.task = '';
    if (model.atLeastOne && entries.length === 0) {
      const field = pick(g, model.body);
      const value = validValue(g, field, ctx, true).forwarded;
      entries.push([field.name, value]);
      forwardedBody[field.name] = value;
    }
    const ordered = g(() =>
      fc.shuffledSubarray(entries, { minLength: entries.length, maxLength: entries.length }),
    );
    // A duplicate key earlier in the text: JSON.parse keeps the last, and so must the upstream.
    if (ordered.length > 0 && chance(g, 10)) {
      const [name] = pick(g, ordered);
      ordered.unshift([name, pick(g, ['earlier', 42, null])]);
    }
    body = { entries: ordered, pretty: chance(g, 30) };
  }
  // DELETE may carry a body the route does not read: ignored, never forwarded.
  if (!model.body && spec.method === 'DELETE' && chance(g, 15)) {
    body = { entries: [['ignored', true]], pretty: false };
  }

  const draft: Draft = {
    method: spec.method,
    segments,
    query: shuffled,
    separator: chance(g, 10) ? '&&' : '&',
    body,
    contentType: body
      ? pick(g, [
          'application/json',
          'application/json; charset=utf-8',
          'Application/JSON',
          'application/json;charset=UTF-8',
        ])
      : undefined,
    auth: validAuth(g, ctx, spec),
    headers: [],
    readsStates,
  };
  if (chance(g, 20))
    draft.headers.push(['user-agent', `fuzz/${int(g, 0, 99)} (${pick(g, ['x', 'y; z'])})`]);
  if (chance(g, 20))
    draft.headers.push(['accept-language', pick(g, ['en', 'fr-CH, fr;q=0.9', '*'])]);
  if (chance(g, 10)) draft.headers.push(['cookie', `session=${ctx.token}`]);
  if (chance(g, 5)) draft.headers.push(['x-forwarded-for', '203.0.113.9']);
  const upstreamPath = spec.path.replace(
    /:([A-Za-z_]+)/g,
    (_, name: string) => forwardedParams[name] ?? '',
  );
  return {
    draft,
    forwarded: { path: upstreamPath, query: forwardedQuery, body: forwardedBody },
    paramValues,
    paramSegments,
  };
}

/** Puts an ordered pair in order (swapping values), so earlier <= later. */
function orderPair(
  query: QueryPair[],
  forwarded: Record<string, string>,
  [a, b]: [string, string],
) {
  const first = query.find((p) => p.name === a);
  const second = query.find((p) => p.name === b);
  if (!first || !second || Date.parse(first.value) <= Date.parse(second.value)) return;
  [first.value, second.value] = [second.value, first.value];
  forwarded[a] = first.value;
  forwarded[b] = second.value;
}

function validAuth(g: G, ctx: FuzzContext, spec: PlatformOperation): [string, string][] {
  const readOnlyFits = spec.method === 'GET' && spec.group !== 'apikeys';
  const token = readOnlyFits && chance(g, 15) ? ctx.readOnlyToken : ctx.token;
  return pick(g, [
    [['authorization', `Bearer ${token}`]],
    [['authorization', `bearer ${token}`]],
    [['authorization', `BEARER \t ${token}`]],
    [['authorization', token]],
    [['x-api-key', token]],
    [
      ['authorization', `Bearer ${token}`],
      ['x-api-key', 'not-a-token'],
    ],
  ] as [string, string][][]);
}

// ---------------------------------------------------------------- mutations

interface Mutation {
  name: string;
  aspect: 'route' | 'param' | 'query' | 'body' | 'auth' | 'header';
  applies: (spec: PlatformOperation, model: RouteModel, d: Draft) => boolean;
  /** Changes the draft; returns the codes the gateway may answer with. */
  apply: (
    g: G,
    d: Draft,
    spec: PlatformOperation,
    model: RouteModel,
    ctx: FuzzContext,
    b: Built,
  ) => number[];
}

const always = () => true;
const hasQuery = (_: PlatformOperation, m: RouteModel) => m.query.length > 0;
const hasBody = (_: PlatformOperation, m: RouteModel, d: Draft) =>
  m.body !== undefined && d.body !== undefined;

function flip(token: string, at: number): string {
  const c = token.charAt(at);
  const other = c === 'A' ? 'B' : 'A';
  return `${token.slice(0, at)}${other}${token.slice(at + 1)}`;
}

export const MUTATIONS: Mutation[] = [
  {
    name: 'wrong method',
    aspect: 'route',
    applies: always,
    apply(g, d, spec) {
      const allowed = METHODS_BY_PATH.get(spec.path) ?? [];
      d.method = pick(
        g,
        ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'].filter((m) => !allowed.includes(m)),
      );
      if (d.method === 'GET') {
        d.body = undefined;
        d.contentType = undefined;
      }
      return [code('METHOD_NOT_ALLOWED')];
    },
  },
  {
    name: 'extra path segment',
    aspect: 'route',
    applies: always,
    apply(g, d) {
      d.segments.push(pick(g, ['x', '1', 'lists', '%2E%2Ex', 'é']));
      return [code('NOT_FOUND')];
    },
  },
  {
    name: 'trailing slash',
    aspect: 'route',
    applies: always,
    apply(_g, d) {
      d.segments.push('');
      return [code('NOT_FOUND')];
    },
  },
  {
    name: 'double slash',
    aspect: 'route',
    applies: always,
    apply(g, d) {
      d.segments.splice(int(g, 0, d.segments.length), 0, '');
      return [code('NOT_FOUND')];
    },
  },
  {
    name: 'path case',
    aspect: 'route',
    applies: always,
    apply(_g, d) {
      d.segments[0] = (d.segments[0] ?? '').toUpperCase();
      return [code('NOT_FOUND')];
    },
  },
  {
    name: 'empty path parameter',
    aspect: 'route',
    applies: (spec) => spec.path.includes(':'),
    apply(_g, d) {
      d.segments[d.segments.length - 1] = '';
      return [code('NOT_FOUND')];
    },
  },
  {
    name: 'bad path parameter',
    aspect: 'param',
    applies: (_s, m) => m.params.length > 0,
    apply(g, d, _spec, model, ctx, b) {
      const field = pick(g, model.params);
      const bad = invalidValue(g, field, b.paramValues[field.name] ?? '', ctx);
      // An empty segment would be another path; a body that repeats the id is left as it was.
      const at = b.paramSegments[field.name] ?? d.segments.length - 1;
      d.segments[at] = encodeURIComponent(bad === '' ? '%' : bad);
      return [VALIDATION];
    },
  },
  {
    name: 'bad query value',
    aspect: 'query',
    applies: hasQuery,
    apply(g, d, _spec, model, ctx) {
      const field = pick(g, model.query);
      const current = d.query.find((p) => p.name === field.name);
      const valid = current?.value ?? validValue(g, field, ctx, false).wire;
      const bad = invalidValue(g, field, valid, ctx);
      const style = current?.style ?? 'component';
      // `%` at the end or before non-hex digits: left as typed, which no bounded field takes.
      const raw = bad.endsWith('%') || bad.includes('%ZZ') || bad.includes('%zz');
      const pair: QueryPair = { name: field.name, value: bad, style };
      if (raw) pair.raw = bad;
      d.query = [...d.query.filter((p) => p.name !== field.name), pair];
      if (field.type.kind === 'state') d.readsStates = true;
      return [VALIDATION];
    },
  },
  {
    name: 'missing required query field',
    aspect: 'query',
    applies: (_s, m) => m.query.some((f) => f.required),
    apply(g, d, _spec, model) {
      const field = pick(
        g,
        model.query.filter((f) => f.required),
      );
      d.query = d.query.filter((p) => p.name !== field.name);
      return [VALIDATION];
    },
  },
  {
    name: 'duplicate query parameter',
    aspect: 'query',
    applies: hasQuery,
    apply(g, d, _spec, model, ctx) {
      const field = pick(g, model.query);
      const present = d.query.filter((p) => p.name === field.name);
      const extra = present.length > 0 && chance(g, 50) ? present.length : 2 - present.length;
      for (let i = 0; i < Math.max(1, extra); i++) {
        const { wire } = validValue(g, field, ctx, false);
        d.query.splice(int(g, 0, d.query.length), 0, {
          name: field.name,
          value: wire,
          style: 'component',
        });
      }
      if (field.type.kind === 'state') d.readsStates = true;
      return [VALIDATION];
    },
  },
  {
    name: 'unknown query parameter',
    aspect: 'query',
    applies: always,
    apply(g, d, _spec, model) {
      const known = new Set(model.query.map((f) => f.name));
      const near = model.query.flatMap((f) => [
        f.name.toUpperCase(),
        f.name.replace('_', ''),
        `${f.name}_`,
        `${f.name}[]`,
        ` ${f.name}`,
      ]);
      const names = ['x', 'api_key', 'access_token', 'callback', '__proto__', 'constructor', 'é'];
      const name = pick(
        g,
        [...names, ...near].filter((n) => !known.has(n)),
      );
      d.query.splice(int(g, 0, d.query.length), 0, {
        name,
        value: pick(g, ['1', '', 'true']),
        style: 'component',
      });
      return [code('UNKNOWN_PARAMETER')];
    },
  },
  {
    name: 'reversed date range',
    aspect: 'query',
    applies: (_s, m) => m.ordered !== undefined,
    apply(g, d, _spec, model, ctx) {
      const [a, b] = model.ordered ?? ['', ''];
      const field = model.query.find((f) => f.name === a);
      if (!field) throw new Error('ordered field missing');
      let x = validValue(g, field, ctx, false).wire;
      let y = validValue(g, field, ctx, false).wire;
      if (Date.parse(x) === Date.parse(y))
        y = field.type.kind === 'date' ? '9999-12-31' : '9999-12-31T00:00:00Z';
      if (x === y) x = field.type.kind === 'date' ? '0000-01-01' : '1000-01-02T00:00:00Z';
      const [early, late] = Date.parse(x) < Date.parse(y) ? [x, y] : [y, x];
      d.query = [
        ...d.query.filter((p) => p.name !== a && p.name !== b),
        { name: a, value: late, style: 'component' },
        { name: b, value: early, style: 'component' },
      ];
      return [VALIDATION];
    },
  },
  {
    name: 'bad body value',
    aspect: 'body',
    applies: hasBody,
    apply(g, d, _spec, model, ctx, b) {
      const field = pick(g, model.body ?? []);
      const entries = d.body?.entries.filter(([k]) => k !== field.name) ?? [];
      const current = b.forwarded.body?.[field.name];
      const wrongType = pick(g, [42, true, null, ['x'], { value: 'x' }, 1.5]);
      const bad =
        field.type.kind === 'json'
          ? pick(g, [...field.type.invalid])
          : chance(g, 50) || field.type.kind === 'int'
            ? wrongType
            : field.name in b.paramValues
              ? `${String(current)}-other`
              : invalidValue(g, field, typeof current === 'string' ? current : 'x', ctx);
      entries.splice(int(g, 0, entries.length), 0, [field.name, bad]);
      d.body = { entries, pretty: d.body?.pretty ?? false };
      return [VALIDATION];
    },
  },
  {
    name: 'missing required body field',
    aspect: 'body',
    applies: (_s, m, d) => hasBody(_s, m, d) && (m.body ?? []).some((f) => f.required),
    apply(g, d, _spec, model) {
      const field = pick(
        g,
        (model.body ?? []).filter((f) => f.required),
      );
      d.body = { entries: d.body?.entries.filter(([k]) => k !== field.name) ?? [], pretty: false };
      return [VALIDATION];
    },
  },
  {
    name: 'mixed body shapes',
    aspect: 'body',
    applies: (_s, m, d) => hasBody(_s, m, d) && m.shapes !== undefined,
    apply(g, d, _spec, model, ctx) {
      const entries = d.body?.entries ?? [];
      // The earlier shape gets a field of the current one; the current shape, a title.
      const earlier = entries.some(([k]) => k === 'team_id');
      const name = earlier ? pick(g, ['intent_id', 'mode', 'platform', 'extra']) : 'title';
      const field = (model.body ?? []).find((f) => f.name === name);
      if (!field) throw new Error(`model lacks ${name}`);
      entries.splice(int(g, 0, entries.length), 0, [
        name,
        validValue(g, field, ctx, true).forwarded,
      ]);
      return [VALIDATION];
    },
  },
  {
    name: 'no body field named',
    aspect: 'body',
    applies: (_s, m, d) => hasBody(_s, m, d) && m.atLeastOne === true,
    apply(_g, d) {
      d.body = { entries: [], pretty: false };
      return [VALIDATION];
    },
  },
  {
    name: 'unknown body field',
    aspect: 'body',
    applies: hasBody,
    apply(g, d) {
      const name = pick(g, [
        'admin',
        'api_key',
        'Name',
        'team',
        '__proto__',
        'constructor',
        'é',
        '',
      ]);
      d.body?.entries.splice(int(g, 0, d.body.entries.length), 0, [
        name,
        pick(g, [true, 'x', null]),
      ]);
      return [code('UNKNOWN_PARAMETER')];
    },
  },
  {
    name: 'body not an object',
    aspect: 'body',
    applies: hasBody,
    apply(g, d) {
      d.body = {
        entries: [],
        pretty: false,
        raw: pick(g, ['[]', '[{}]', '"x"', '42', 'null', 'true']),
      };
      return [VALIDATION];
    },
  },
  {
    name: 'invalid JSON',
    aspect: 'body',
    applies: hasBody,
    apply(g, d) {
      const text = renderBody(d.body ?? { entries: [], pretty: false });
      d.body = {
        entries: [],
        pretty: false,
        raw: pick(g, [
          text.slice(0, -1),
          `${text},`,
          text.replaceAll('"', "'"),
          '',
          '{',
          'undefined',
          '{"a":NaN}',
          `${text}x`,
        ]),
      };
      return [code('INVALID_JSON')];
    },
  },
  {
    name: 'wrong content type',
    aspect: 'body',
    applies: hasBody,
    apply(g, d) {
      d.contentType = pick(g, [
        undefined,
        '',
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/jsonp',
        'application/json-patch+json',
        'text/json',
        'application/ json',
      ]);
      return [code('UNSUPPORTED_MEDIA_TYPE')];
    },
  },
  {
    name: 'body too large',
    aspect: 'body',
    applies: hasBody,
    apply(g, d) {
      const text = renderBody(d.body ?? { entries: [], pretty: false });
      // Whitespace is valid JSON padding: only the size is wrong.
      d.body = {
        entries: [],
        pretty: false,
        raw: `${' '.repeat(65_536 + int(g, 0, 4096))}${text}`,
      };
      return [code('PAYLOAD_TOO_LARGE')];
    },
  },
  {
    name: 'bad token',
    aspect: 'auth',
    applies: always,
    apply(g, d, _spec, _model, ctx) {
      const t = ctx.token;
      d.auth = pick(g, [
        [['authorization', `Basic ${btoa(`user:${t}`)}`]],
        [['authorization', `Bearer ${flip(t, int(g, 5, t.length - 1))}`]],
        [['authorization', `Bearer ${t.slice(0, -1)}`]],
        [['authorization', `Bearer ${t}x`]],
        [['authorization', `Bearer ${ctx.unknownToken}`]],
        [['authorization', `Bearer ${ctx.adminToken}`]],
        [['authorization', ctx.platformKey]],
        [['authorization', `Bearer ${t} ${t}`]],
        [['authorization', `Token ${t}`]],
        [['authorization', t.toUpperCase()]],
        [['authorization', `apgb_${t.slice(5)}.x`]],
        [['x-api-key', `Bearer ${t}`]],
        [
          ['authorization', 'Bearer nope'],
          ['x-api-key', t],
        ],
      ] as [string, string][][]);
      return [code('INVALID_TOKEN')];
    },
  },
  {
    name: 'missing token',
    aspect: 'auth',
    applies: always,
    apply(g, d) {
      d.auth = pick(g, [[], [['authorization', '']], [['x-api-key', ' ']]] as [string, string][][]);
      return [code('MISSING_TOKEN')];
    },
  },
  {
    name: 'token without the scope',
    aspect: 'auth',
    applies: (spec) => spec.method !== 'GET' || spec.group === 'apikeys',
    apply(_g, d, _spec, _model, ctx) {
      d.auth = [['authorization', `Bearer ${ctx.readOnlyToken}`]];
      return [code('SCOPE_REQUIRED')];
    },
  },
  {
    name: 'origin not allowed',
    aspect: 'header',
    applies: always,
    apply(g, d) {
      d.headers.push(['origin', pick(g, ['https://evil.example', 'null', 'http://127.0.0.1:1'])]);
      return [code('ORIGIN_NOT_ALLOWED')];
    },
  },
];

// ---------------------------------------------------------------- the case

const PATHS_WITH_PARAMS = new Set(
  BUILT_IN_OPERATIONS.filter((s) => s.path.includes(':')).map((s) => s.id),
);

function requestIdForm(g: G, mustBePlain: boolean): RequestIdForm {
  if (mustBePlain) return 'plain';
  return pick(g, [
    'plain',
    'plain',
    'plain',
    'symbols',
    'longest',
    'too-long',
    'bad-char',
    'empty',
  ]);
}

/**
 * `size` generated requests, each with what the gateway must do with it. One
 * generator draws them all: fc.array over fc.gen() would repeat one case.
 */
export function batchArbitrary(ctx: FuzzContext, size: number): fc.Arbitrary<CasePlan[]> {
  return fc.gen().map((g) => Array.from({ length: size }, () => buildCase(g, ctx)));
}

/** The operations fuzzed: every one but those with their own tests (model.ts, UNFUZZED). */
export const FUZZED_SPECS = BUILT_IN_OPERATIONS.filter((s) => !UNFUZZED.includes(s.id));

function buildCase(g: G, ctx: FuzzContext): CasePlan {
  const spec = pick(g, FUZZED_SPECS);
  const model = MODELS[spec.id];
  if (!model) throw new Error(`no fuzz model for ${spec.id}`);
  const built = buildValid(g, spec, model, ctx);
  const d = built.draft;

  const mutations: string[] = [];
  const codes = new Set<number>();
  if (chance(g, 55)) {
    const count = chance(g, 80) ? 1 : 2;
    const aspects = new Set<string>();
    for (let i = 0; i < count; i++) {
      const candidates = MUTATIONS.filter(
        (m) => !aspects.has(m.aspect) && m.applies(spec, model, d),
      );
      if (candidates.length === 0) break;
      const m = pick(g, candidates);
      aspects.add(m.aspect);
      for (const c of m.apply(g, d, spec, model, ctx, built)) codes.add(c);
      mutations.push(m.name);
    }
  }

  const body = d.body ? renderBody(d.body) : undefined;
  // A body over the limit is refused whatever else is right with it.
  if (body !== undefined && new TextEncoder().encode(body).byteLength > 65_536) {
    if (mutations.length === 0) mutations.push('valid values over the body limit');
    codes.add(code('PAYLOAD_TOO_LARGE'));
  }
  const headers: [string, string][] = [...d.auth, ...d.headers];
  if (d.contentType !== undefined) headers.push(['content-type', d.contentType]);
  const valid = codes.size === 0;
  const cacheControl = spec.cache
    ? pick(g, ['no-store', 'no-store', 'NO-STORE', 'no-cache', 'max-age=0', null])
    : null;
  if (cacheControl !== null) headers.push(['cache-control', cacheControl]);
  const query = renderQuery(d);
  const cacheKey =
    spec.cache && !/no-store/i.test(cacheControl ?? '')
      ? `${spec.id}|${built.forwarded.path}|${JSON.stringify(Object.entries(built.forwarded.query).sort())}`
      : null;
  const isWrite = spec.method !== 'GET';
  return {
    route: spec.id,
    method: d.method,
    path: `/${d.segments.join('/')}`,
    query: d.separator === '&&' && query !== '' ? `&${query}` : query,
    headers,
    body: d.method === 'GET' ? undefined : body,
    requestId: requestIdForm(g, valid && isWrite),
    readsStates: d.readsStates,
    mutations,
    expect: valid
      ? { kind: 'valid', forwarded: built.forwarded, cacheKey }
      : { kind: 'invalid', codes: [...codes] },
  };
}

/** Used by the coverage check. */
export const ROUTES_WITH_PARAMS = PATHS_WITH_PARAMS;
