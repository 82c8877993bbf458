/**
 * The fuzzer's own model of every operation's inputs, written from
 * PLATFORM.md's bounds and docs/BOUNDS.md (not read out of the zod
 * schemas), so the gateway is checked against an independent oracle.
 * fuzz.test.ts checks that it names exactly the routes and fields of BUILT_IN_OPERATIONS.
 */

/** Decimal integers: the schema's regex takes at most 16 digits, leading zeros included. */
export const MAX_DIGITS = 16;
/** page_num's bound: what a 16-digit value may be and still be exact. */
export const INT_MAX = Number.MAX_SAFE_INTEGER;

export type FieldType =
  | { kind: 'int'; min: number; max: number }
  | { kind: 'enum'; values: readonly string[] }
  | { kind: 'text'; min: number; max: number }
  | { kind: 'date' }
  | { kind: 'datetime' }
  | { kind: 'uuid' }
  | { kind: 'opaque' }
  /** calls.list's status: '' or one of the states calls.filter_values returns. */
  | { kind: 'state' }
  /** 1 to 32 letters, digits, _ or - (session.create's mode and platform). */
  | { kind: 'word' }
  /** A JSON body value: drawn from examples of the bounds PLATFORM.md and docs/BOUNDS.md give. */
  | { kind: 'json'; valid: readonly unknown[]; invalid: readonly unknown[] };

export interface Field {
  name: string;
  type: FieldType;
  required?: boolean;
  /** What the gateway sends upstream when the field is absent. */
  default?: string;
}

export interface RouteModel {
  params: Field[];
  query: Field[];
  body?: Field[];
  /** Fields that must be in order (earlier <= later) when both are present. */
  ordered?: [string, string];
  /**
   * The body is one of these shapes: only its fields, `required` ones always (session.create:
   * the specification's and the current client's). A field of another shape alone is refused.
   */
  shapes?: { fields: string[]; required: string[] }[];
  /** The body must name at least one of its fields (report.update). */
  atLeastOne?: boolean;
}

const int = (min: number, max = INT_MAX): FieldType => ({ kind: 'int', min, max });
const text = (min: number, max: number): FieldType => ({ kind: 'text', min, max });
const oneOf = (...values: string[]): FieldType => ({ kind: 'enum', values });
const pageNum: Field = { name: 'page_num', type: int(1), default: '1' };
const pageSize = (fallback: number): Field => ({
  name: 'page_size',
  type: int(1, 100),
  default: String(fallback),
});
const opaque = (name: string, required = true): Field => ({
  name,
  type: { kind: 'opaque' },
  required,
});
const uuid = (name: string): Field => ({ name, type: { kind: 'uuid' }, required: true });
const kinds = (name: string): Field => ({ name, type: oneOf('all', 'system', 'user') });
const json = (valid: readonly unknown[], invalid: readonly unknown[]): FieldType => ({
  kind: 'json',
  valid,
  invalid,
});
/** An object nested `levels` deep. */
const nested = (levels: number): unknown =>
  levels <= 1 ? { leaf: true } : { next: nested(levels - 1) };

export const MODELS: Record<string, RouteModel> = {
  'apikey.create': {
    params: [],
    query: [],
    body: [{ name: 'name', type: text(1, 64), required: true }],
  },
  'apikey.delete': { params: [{ name: 'id', type: int(1), required: true }], query: [] },
  'apikey.list': { params: [], query: [pageNum, pageSize(10)] },
  'calls.filter_values': { params: [], query: [] },
  'calls.list': {
    params: [],
    query: [
      pageNum,
      pageSize(10),
      { name: 'platform', type: oneOf('all', 'engine', 'extension', 'api'), default: 'all' },
      { name: 'api_key_name', type: text(1, 128) },
      { name: 'start_date', type: { kind: 'date' } },
      { name: 'end_date', type: { kind: 'date' } },
      { name: 'order_field', type: oneOf('created_at', 'total_cost'), default: 'created_at' },
      { name: 'order', type: oneOf('desc', 'asc'), default: 'desc' },
      { name: 'status', type: { kind: 'state' } },
    ],
    ordered: ['start_date', 'end_date'],
  },
  'team.list': { params: [], query: [pageNum, pageSize(10), kinds('team_type')] },
  'team.info': { params: [uuid('team_id')], query: [] },
  'agent.list': { params: [], query: [kinds('agent_type'), pageNum, pageSize(10)] },
  'agent.info': { params: [uuid('agent_id')], query: [] },
  'session.create': {
    params: [],
    query: [],
    body: [
      { name: 'team_id', type: { kind: 'uuid' } },
      { name: 'task', type: text(0, 20_000) },
      { name: 'title', type: text(0, 200) },
      opaque('intent_id', false),
      { name: 'mode', type: { kind: 'word' } },
      { name: 'platform', type: { kind: 'word' } },
      {
        name: 'extra',
        type: json(
          [{}, { tone: 'friendly' }, { a: { b: [1, 2, { c: null }] } }, { n: 1.5, ok: true }],
          [[], null, 'x', 1, [{}], { pad: 'x'.repeat(16_400) }, nested(9)],
        ),
      },
    ],
    // The earlier shape's task defaults to '' upstream; the current shape's is required.
    shapes: [
      { fields: ['team_id', 'task', 'title'], required: ['team_id'] },
      { fields: ['task', 'intent_id', 'mode', 'platform', 'extra'], required: ['task'] },
    ],
  },
  'session.info': { params: [opaque('session_id')], query: [] },
  'session.rename': {
    params: [opaque('session_id')],
    query: [],
    // session_id in the body, when present, must repeat the path's.
    body: [{ name: 'title', type: text(1, 200), required: true }, opaque('session_id', false)],
  },
  'session.messages': {
    params: [],
    query: [
      opaque('session_id'),
      pageNum,
      pageSize(20),
      { name: 'role', type: text(1, 32) },
      { name: 'content', type: text(1, 500) },
      { name: 'from_timestamp', type: { kind: 'datetime' } },
      { name: 'to_timestamp', type: { kind: 'datetime' } },
    ],
    ordered: ['from_timestamp', 'to_timestamp'],
  },
  'session.messages_between': {
    params: [],
    query: [opaque('session_id'), opaque('from_message_id'), opaque('to_message_id')],
  },
  'browser.info': { params: [opaque('browser_id')], query: [] },
  'browser.list': {
    params: [],
    query: [opaque('session_id', false), pageNum, pageSize(20)],
  },
  'browser.release': { params: [opaque('browser_id')], query: [] },
  'browser.pages': { params: [], query: [opaque('browser_id'), pageNum, pageSize(20)] },
  'session.marketing_data': {
    params: [opaque('session_id')],
    query: [{ name: 'type', type: oneOf('reply', 'like', 'retweet', 'tweet') }],
  },
  'product.create': {
    params: [],
    query: [],
    body: [
      { name: 'product', type: text(1, 2000), required: true },
      {
        name: 'attachments',
        type: json(
          [[], [{ file_name: 'a.txt', file_url: 'https://f.example/a.txt' }]],
          [
            [{ file_name: 'a.txt' }],
            [{ file_name: '', file_url: 'https://f.example/a' }],
            [{ file_name: 'a', file_url: 'ftp://f.example/a' }],
            Array.from({ length: 21 }, () => ({ file_name: 'a', file_url: 'https://f.example/a' })),
            { file_name: 'a' },
            'a.txt',
          ],
        ),
      },
    ],
  },
  'product.info': { params: [opaque('product_id')], query: [] },
  'product.query_results': { params: [opaque('query_id')], query: [] },
  'report.info': { params: [opaque('report_id')], query: [] },
  'report.update': {
    params: [opaque('report_id')],
    query: [],
    body: [
      { name: 'product_name', type: text(1, 200) },
      { name: 'target_description', type: text(0, 5000) },
      { name: 'keywords', type: json([[], ['a', 'b c']], [[''], [1], 'a', ['x'.repeat(201)]]) },
      ...['user_personas', 'user_profiles', 'competitors'].map((name) => ({
        name,
        type: json([[], [{ name: 'x' }, 'y', 3]], [{}, 'x', Array.from({ length: 101 }, () => 1)]),
      })),
      {
        name: 'recommended_campaigns',
        type: json(
          [[{ name: 'Launch', description: '' }]],
          [[{ name: '', description: 'x' }], [{ name: 'x' }]],
        ),
      },
      {
        name: 'related_links',
        type: json([['https://example.com/a']], [['example.com'], [''], 'https://example.com']),
      },
      {
        name: 'related_industries',
        type: json(
          [[{ level1: { id: 1 }, level2: [101, 102] }], [{ level1: { id: 0 }, level2: [] }]],
          [
            [{ level1: { id: -1 }, level2: [] }],
            [{ level1: { id: 1 } }],
            [{ level1: 1, level2: [] }],
            [{ level1: { id: 1 }, level2: [1.5] }],
          ],
        ),
      },
    ],
    atLeastOne: true,
  },
  'report.categories': { params: [], query: [] },
};

/** Operations the fuzzer leaves to their own tests: an upload's body is multipart (test/upload.test.ts). */
export const UNFUZZED = ['session.upload'];
