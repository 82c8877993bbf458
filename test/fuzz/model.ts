/**
 * The fuzzer's own model of every operation's inputs, written from
 * PLATFORM.md's bounds and docs/BOUNDS.md (not read out of the zod
 * schemas), so the gateway is checked against an independent oracle.
 * fuzz.test.ts checks that it names exactly the routes and fields of ROUTE_SPECS.
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
  | { kind: 'state' };

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
      uuid('team_id'),
      { name: 'task', type: text(0, 20_000), default: '' },
      { name: 'title', type: text(0, 200) },
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
};
