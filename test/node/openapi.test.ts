/**
 * The partner contract from outside, on the built Worker (plain workerd) in
 * front of the real platform emulator:
 * - both documents validate as OpenAPI 3.1 (@seriousme/openapi-schema-validator);
 * - the emulator's real answers, through the gateway, validate against each
 *   operation's success schema (ajv, JSON Schema 2020-12);
 * - requests sampled from the document's own schemas are accepted and reach
 *   the platform once with exactly those values; requests the document calls
 *   invalid are refused with a validation envelope and reach nothing.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { opaqueIdFrom } from '../../emulator/dashboard-seed';
import { DEMO_PLATFORM_KEY, STATES } from '../../emulator/seed';
import { type RunningEmulator, startEmulator } from '../../emulator/server';
import { type GatewayHost, startGateway } from '../../scripts/workerd-host';

type Json = Record<string, any>;
interface Param {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  schema: Json;
}
interface Operation {
  id: string;
  method: string;
  path: string;
  params: Param[];
  body?: Json;
}

let emulator: RunningEmulator;
let gateway: GatewayHost;
let token = '';
let doc: Json;
/** Real ids from the platform, for path and required query parameters. */
const known: Record<string, string> = {};
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
  const limits = { policies: [{ name: 'burst', limit: 1_000_000, window_s: 10 }], quota: {} };
  gateway = await startGateway({
    platformBaseUrl: emulator.url,
    vars: { DEFAULT_LIMITS: JSON.stringify(limits) },
  });
  const res = await fetch(`${gateway.url}/admin/tenants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gateway.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: 'contract',
      platform_key: DEMO_PLATFORM_KEY,
      token: { name: 'contract', scopes: ['full', 'apikeys:read', 'apikeys:write'] },
    }),
  });
  expect(res.status).toBe(201);
  token = ((await res.json()) as Json).data.token;
  doc = (await (await fetch(`${gateway.url}/openapi.json`)).json()) as Json;
  ajv.addSchema(doc, 'partner');

  const teams = await call('GET', '/team/lists');
  known.team_id = teams.body.data.data[0].team_id;
  const agents = await call('GET', '/agent/lists');
  known.agent_id = agents.body.data.data[0].agent_id;
  const browsers = await call('GET', '/browser/lists');
  known.browser_id = browsers.body.data.browsers[0].browser_id;
  const sessionId: string = browsers.body.data.browsers[0].session_id;
  known.session_id = sessionId;
  const messages = await call('GET', '/session/message/lists', { session_id: sessionId });
  const ids = (messages.body.data.messages as Json[]).map((m) => m.message_id as string);
  known.from_message_id = ids[0] ?? '';
  known.to_message_id = ids[ids.length - 1] ?? '';
  // The demo account's seeded dashboard (emulator/dashboard-seed.ts).
  known.product_id = opaqueIdFrom('prod', 'demo:product:1');
  known.report_id = opaqueIdFrom('rep', 'demo:report:1');
  known.query_id = opaqueIdFrom('qry', 'demo:query:1');
}, 120_000);

afterAll(async () => {
  await gateway?.stop();
  await emulator?.close();
});

async function call(
  method: string,
  path: string,
  query: Record<string, string> = {},
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const requestId = `contract-${crypto.randomUUID()}`;
  const url = new URL(gateway.url + path);
  for (const [k, v] of Object.entries(query)) url.searchParams.append(k, v);
  const form = body instanceof FormData;
  const res = await fetch(url, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      'x-request-id': requestId,
      ...(body === undefined || form ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : form ? body : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Json, requestId };
}

async function upstreamSaw(requestId: string): Promise<Json[]> {
  const res = await fetch(`${emulator.url}/__emulator/requests?request_id=${requestId}`);
  return (await res.json()) as Json[];
}

function platformOperations(): Operation[] {
  const gatewayOwn = [
    'auth.browser_token',
    'usage.own',
    'usage.requests',
    'session.events',
    'token.own',
    'token.rotate',
  ];
  return Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([, op]) => !gatewayOwn.includes(op.operationId))
      .map(([method, op]) => ({
        id: op.operationId as string,
        method: method.toUpperCase(),
        path,
        params: (op.parameters ?? []) as Param[],
        body: op.requestBody?.content['application/json']?.schema as Json | undefined,
      })),
  );
}

const pointer = (...parts: string[]) =>
  parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

/** ajv's check against `partner#/paths/<path>/<method>/responses/200/…/anyOf/0`: the success envelope. */
function successValidator(op: Operation) {
  const ref = `partner#/${pointer('paths', op.path, op.method.toLowerCase(), 'responses', '200', 'content', 'application/json', 'schema', 'anyOf', '0')}`;
  return ajv.compile({ $ref: ref });
}

const fill = (path: string, values: Record<string, string>) =>
  path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(values[name] ?? ''));

describe('the documents', () => {
  it('validate as OpenAPI 3.1', async () => {
    const validator = new Validator();
    const partner = await validator.validate(structuredClone(doc));
    expect(partner.errors ?? []).toEqual([]);
    expect(partner.valid).toBe(true);
    expect(validator.version).toBe('3.1');

    const res = await fetch(`${gateway.url}/admin/openapi.json`, {
      headers: { authorization: `Bearer ${gateway.adminToken}` },
    });
    const operator = await new Validator().validate((await res.json()) as Json);
    expect(operator.errors ?? []).toEqual([]);
    expect(operator.valid).toBe(true);
  });
});

describe("the platform's real answers match the document", () => {
  const bodies: Record<string, () => unknown> = {
    'apikey.create': () => ({ name: `contract ${Date.now()}` }),
    'session.create': () => ({ task: 'contract test', mode: 'marketing' }),
    'session.rename': () => ({ title: 'renamed by the contract test' }),
    'session.upload': () => {
      const form = new FormData();
      form.append('files', new Blob(['contract']), 'contract.txt');
      return form;
    },
    'product.create': () => ({ product: 'contract product' }),
    'report.update': () => ({ keywords: ['contract'] }),
  };

  it('for every operation, with code 0 and the documented data', async () => {
    const ops = platformOperations();
    // Deletions last, on things made for them.
    ops.sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
    expect(ops).toHaveLength(26);
    for (const op of ops) {
      const values = { ...known };
      if (op.id === 'apikey.delete') {
        const made = await call('POST', '/user/apikey/new', {}, { name: 'to delete' });
        expect(made.body.code).toBe(0);
        const list = await call('GET', '/user/apikey/lists', { page_size: '100' });
        const mine = (list.body.data.data as Json[]).find((k) => k.name === 'to delete');
        values.id = String(mine?.id);
      }
      const query = Object.fromEntries(
        op.params
          .filter((p) => p.in === 'query' && p.required)
          .map((p) => [p.name, values[p.name] ?? '']),
      );
      const answer = await call(op.method, fill(op.path, values), query, bodies[op.id]?.());
      expect(answer.status, `${op.id}: ${JSON.stringify(answer.body)}`).toBe(200);
      expect(answer.body.code, op.id).toBe(0);
      const validate = successValidator(op);
      expect(validate(answer.body), `${op.id}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    }
  });
});

/** A value the document allows for one field. */
function valid(name: string, schema: Json, required: boolean): fc.Arbitrary<string | number> {
  if (name in known && required) return fc.constant(known[name] as string);
  if (name === 'status') return fc.constantFrom(...STATES);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as string[]));
  if (schema.type === 'integer') {
    const max = Math.min(schema.maximum as number, (schema.minimum as number) + 1000);
    return fc.integer({ min: schema.minimum, max });
  }
  if (schema.format === 'uuid') return fc.uuid();
  if (schema.format === 'date') {
    return fc
      .date({ min: new Date('2024-01-01'), max: new Date('2027-12-31'), noInvalidDate: true })
      .map((d) => d.toISOString().slice(0, 10));
  }
  if (schema.format === 'date-time') {
    return fc
      .date({ min: new Date('2024-01-01'), max: new Date('2027-12-31'), noInvalidDate: true })
      .map((d) => d.toISOString());
  }
  if (typeof schema.pattern === 'string') return fc.stringMatching(new RegExp(schema.pattern));
  return fc.string({
    minLength: Math.max(1, schema.minLength ?? 0),
    maxLength: Math.min(schema.maxLength ?? 40, 40),
  });
}

/** One way the document says a field is wrong, or null when it says none. */
function invalid(schema: Json): fc.Arbitrary<string> | null {
  if (Array.isArray(schema.enum)) return fc.constant('not-a-member');
  if (schema.type === 'integer') {
    return fc.constantFrom(
      String(schema.minimum - 1),
      `${schema.minimum}.5`,
      'ten',
      ...(schema.maximum < Number.MAX_SAFE_INTEGER ? [String(schema.maximum + 1)] : []),
    );
  }
  if (schema.format === 'uuid') return fc.constant('not-a-uuid');
  if (schema.format === 'date') return fc.constantFrom('2026-13-01', '31/01/2026');
  if (schema.format === 'date-time') return fc.constant('yesterday');
  if (typeof schema.pattern === 'string') return fc.constantFrom('../etc', 'a b', 'x'.repeat(200));
  if (typeof schema.maxLength === 'number') return fc.constant('x'.repeat(schema.maxLength + 1));
  return null;
}

/** Reads only: sampled valid requests with every optional parameter in or out. */
function readOperations() {
  return platformOperations().filter((op) => op.method === 'GET');
}

function sampledQuery(op: Operation): fc.Arbitrary<Record<string, string>> {
  const entries = op.params
    .filter((p) => p.in === 'query')
    .map((p) => {
      const value = valid(p.name, p.schema, p.required).map(String);
      return [p.name, p.required ? value : fc.option(value, { nil: undefined })] as const;
    });
  return fc.record(Object.fromEntries(entries)).map((query) => {
    const set = Object.fromEntries(
      Object.entries(query).filter((e): e is [string, string] => e[1] !== undefined),
    );
    // Rules across fields, which the descriptions state: each pair in order.
    for (const [earlier, later] of [
      ['start_date', 'end_date'],
      ['from_timestamp', 'to_timestamp'],
    ] as const) {
      const a = set[earlier];
      const b = set[later];
      if (a && b && a > b) [set[earlier], set[later]] = [b, a];
    }
    return set;
  });
}

describe('requests sampled from the document', () => {
  it('are accepted and reach the platform once, with exactly the values sent', async () => {
    const cases = fc.oneof(
      ...readOperations().map((op) => fc.record({ op: fc.constant(op), query: sampledQuery(op) })),
    );
    await fc.assert(
      fc.asyncProperty(cases, async ({ op, query }) => {
        const answer = await call('GET', fill(op.path, known), query, undefined, {
          'cache-control': 'no-store',
        });
        expect(answer.status, `${op.id} ${JSON.stringify(query)}: ${answer.body.msg}`).toBe(200);
        const saw = await upstreamSaw(answer.requestId);
        expect(saw).toHaveLength(1);
        for (const [name, value] of Object.entries(query)) {
          const upstream = String(saw[0]?.query[name]);
          expect(upstream, name).toBe(value);
        }
      }),
      { numRuns: 150, seed: 20261123 },
    );
  });

  it('are refused when the document calls them invalid, and reach nothing', async () => {
    const cases = fc.oneof(
      ...readOperations().flatMap((op) =>
        op.params
          .filter((p) => p.in === 'query' && invalid(p.schema) !== null)
          .map((p) =>
            fc.record({
              op: fc.constant(op),
              query: sampledQuery(op),
              name: fc.constant(p.name),
              bad: invalid(p.schema) as fc.Arbitrary<string>,
            }),
          ),
      ),
      // A parameter the document does not list, on any read.
      ...readOperations().map((op) =>
        fc.record({
          op: fc.constant(op),
          query: sampledQuery(op),
          name: fc.constant('not_in_the_document'),
          bad: fc.constant('1'),
        }),
      ),
    );
    await fc.assert(
      fc.asyncProperty(cases, async ({ op, query, name, bad }) => {
        const answer = await call('GET', fill(op.path, known), { ...query, [name]: bad });
        expect(answer.status, `${op.id} ${name}=${bad}`).toBe(400);
        expect([40001, 40003]).toContain(answer.body.code);
        expect(answer.body.data.request_id).toBe(answer.requestId);
        expect(await upstreamSaw(answer.requestId)).toEqual([]);
      }),
      { numRuns: 150, seed: 20261123 },
    );
  });

  it('are refused when a required parameter is missing', async () => {
    for (const op of readOperations()) {
      for (const p of op.params.filter((x) => x.in === 'query' && x.required)) {
        const query = Object.fromEntries(
          op.params
            .filter((x) => x.in === 'query' && x.required && x.name !== p.name)
            .map((x) => [x.name, known[x.name] ?? '']),
        );
        const answer = await call('GET', fill(op.path, known), query);
        expect(answer.status, `${op.id} without ${p.name}`).toBe(400);
        expect(answer.body.code).toBe(40001); // VALIDATION_FAILED
        expect(answer.body.msg).toContain(p.name);
        expect(await upstreamSaw(answer.requestId)).toEqual([]);
      }
    }
  });
});

describe("the gateway's bounds are the platform's (src/operations/bounds.ts)", () => {
  it('page_num at its largest reaches the platform, which answers it; one more is refused', async () => {
    const max = Number.MAX_SAFE_INTEGER;
    const at = await call('GET', '/team/lists', { page_num: String(max) });
    expect(at.status, at.body.msg).toBe(200);
    expect(at.body.code).toBe(0);
    expect(at.body.data).toMatchObject({ page_num: max, data: [] });
    expect((await upstreamSaw(at.requestId))[0]?.query.page_num).toBe(String(max));
    const past = await call('GET', '/team/lists', { page_num: String(max + 2) });
    expect(past.body.code).toBe(40001);
    expect(await upstreamSaw(past.requestId)).toEqual([]);
  });
});
