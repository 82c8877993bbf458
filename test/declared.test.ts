/**
 * Operations an operator declares in PLATFORM_OPERATIONS, and built-in schemas
 * amended through ROUTE_OVERRIDES, end to end over real HTTP to the emulator,
 * whose /dashboard/product/lists and /dashboard/product/rename/{id} no built-in
 * operation knows (emulator/dashboard.ts).
 */
import { afterEach, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { ERRORS } from '../src/errors';
import {
  countExactly,
  createTenant,
  envelope,
  expectRefusal,
  gatewayWith,
  injectFault,
  platformKeys,
  requestId,
  secondsHeader,
  type TestTenant,
  UPSTREAM,
  upstreamSaw,
} from './helpers';

const dashboard = inject('demoDashboard');

const DECLARED = {
  'product.list': {
    method: 'GET',
    path: '/dashboard/product/lists',
    credential: 'x-api-key',
    group: 'products',
    cache: { ttl_s: 60, grace_s: 60 },
    query: {
      type: 'object',
      properties: {
        page_num: { type: 'integer', minimum: 1, default: 1 },
        page_size: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
        status: { enum: ['all', 'pending', 'completed'] },
      },
    },
  },
  'product.rename': {
    method: 'POST',
    path: '/dashboard/product/rename/{product_id}',
    credential: 'x-api-key',
    group: 'catalogue',
    cost: 7,
    timeout_ms: 5000,
    body: {
      type: 'object',
      properties: { product_name: { type: 'string', minLength: 1, maxLength: 64 } },
      required: ['product_name'],
    },
  },
};

const withDeclared = { PLATFORM_OPERATIONS: JSON.stringify(DECLARED) };

let tenant: TestTenant;
beforeAll(async () => {
  tenant = await createTenant(platformKeys.demo, 'declared');
});

/** A call to the gateway with these settings, as `tenant` (or the token given). */
async function call(
  settings: Record<string, string>,
  path: string,
  init: RequestInit & { json?: unknown; token?: string } = {},
) {
  const id = requestId('declared');
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${init.token ?? tenant.token}`);
  headers.set('x-request-id', id);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set('content-type', 'application/json');
    body = JSON.stringify(init.json);
  }
  const res = await gatewayWith(settings, path, { ...init, headers, body });
  return { res, id, body: await envelope(res) };
}

describe('a declared operation', () => {
  it('is forwarded with its validated query, defaults applied, and the key in its header', async () => {
    const { res, body, id } = await call(
      withDeclared,
      '/dashboard/product/lists?status=completed',
      {
        headers: { 'cache-control': 'no-cache' },
      },
    );
    expect(res.status).toBe(200);
    expect(body.code).toBe(0);
    expect(body.data.data.map((p: { product_id: string }) => p.product_id)).toContain(
      dashboard.productId,
    );
    const [seen, ...more] = await upstreamSaw(id);
    expect(more).toEqual([]);
    expect(seen?.path).toBe('/dashboard/product/lists');
    expect(seen?.query).toEqual({ page_num: '1', page_size: '10', status: 'completed' });
    expect(seen?.headers['x-api-key']).toBe(platformKeys.demo);
    expect(seen?.headers.authorization).toBeUndefined();
    expect(JSON.stringify(seen?.headers)).not.toContain(tenant.token);
  });

  it('forwards a write with its path parameter and body, at its own cost', async () => {
    const { res, body, id } = await call(
      withDeclared,
      `/dashboard/product/rename/${dashboard.productId}`,
      { method: 'POST', json: { product_name: 'Renamed widget' } },
    );
    expect(res.status).toBe(200);
    expect(body.data.product_name).toBe('Renamed widget');
    const [seen] = await upstreamSaw(id);
    expect(seen?.path).toBe(`/dashboard/product/rename/${dashboard.productId}`);
    expect(JSON.parse(seen?.body ?? 'null')).toEqual({ product_name: 'Renamed widget' });
    // Cost 7, counted exactly: a tenant of its own with one fixed window of 1000 units.
    const counted = await createTenant(platformKeys.demo, 'declared cost');
    await countExactly(counted);
    const again = await call(withDeclared, `/dashboard/product/rename/${dashboard.productId}`, {
      method: 'POST',
      json: { product_name: 'Again' },
      token: counted.token,
    });
    expect(again.res.headers.get('ratelimit')).toMatch(/^"units";r=993;/);
  });

  it('refuses what its schemas refuse, before anything goes upstream', async () => {
    const cases: [
      string,
      RequestInit & { json?: unknown },
      'VALIDATION_FAILED' | 'UNKNOWN_PARAMETER',
      string,
    ][] = [
      [
        '/dashboard/product/lists?page_size=500',
        {},
        'VALIDATION_FAILED',
        'page_size: must be at most 100',
      ],
      [
        '/dashboard/product/lists?page_size=ten',
        {},
        'VALIDATION_FAILED',
        'page_size must be an integer',
      ],
      ['/dashboard/product/lists?status=gone', {}, 'VALIDATION_FAILED', 'status: must be one of'],
      ['/dashboard/product/lists?colour=red', {}, 'UNKNOWN_PARAMETER', 'colour'],
      [
        `/dashboard/product/rename/${dashboard.productId}`,
        { method: 'POST', json: {} },
        'VALIDATION_FAILED',
        'product_name: is required',
      ],
      [
        `/dashboard/product/rename/${dashboard.productId}`,
        { method: 'POST', json: { product_name: 'x', colour: 'red' } },
        'UNKNOWN_PARAMETER',
        'colour',
      ],
      [
        '/dashboard/product/rename/bad%20id',
        { method: 'POST', json: { product_name: 'x' } },
        'VALIDATION_FAILED',
        'product_id must be 1 to 128',
      ],
    ];
    for (const [path, init, kind, says] of cases) {
      const answer = await call(withDeclared, path, init);
      const body = await expectRefusal(answer, kind);
      expect(body.msg, path).toContain(says);
      expect(await upstreamSaw(answer.id), path).toEqual([]);
    }
  });

  it('is refused by scope: its group is a scope like any other', async () => {
    const narrow = await createTenant(platformKeys.demo, 'narrow', ['teams:read']);
    const refused = await call(withDeclared, '/dashboard/product/lists', { token: narrow.token });
    const body = await expectRefusal(refused, 'SCOPE_REQUIRED');
    expect(body.data.scope).toBe('products:read');
    expect(await upstreamSaw(refused.id)).toEqual([]);
  });

  it('is cached when declared so, per platform key', async () => {
    const path = '/dashboard/product/lists?page_size=3';
    const first = await call(withDeclared, path);
    const second = await call(withDeclared, path);
    expect(second.res.headers.get('x-cache')).toBe('HIT');
    expect(second.body).toEqual(first.body);
    expect(await upstreamSaw(second.id)).toEqual([]);
  });

  it('answers 405 with Allow for another method, and undeclared paths stay 404', async () => {
    const wrong = await call(withDeclared, '/dashboard/product/lists', { method: 'DELETE' });
    await expectRefusal(wrong, 'METHOD_NOT_ALLOWED');
    expect(wrong.res.headers.get('allow')).toBe('GET');
    await expectRefusal(await call(withDeclared, '/dashboard/product/nothing'), 'NOT_FOUND');
    // Without the setting, the same path is unknown.
    await expectRefusal(await call({}, '/dashboard/product/lists'), 'NOT_FOUND');
  });

  it('is in /openapi.json, with its schemas, scope and group', async () => {
    const res = await gatewayWith(withDeclared, '/openapi.json');
    const doc = await res.json<{
      paths: Record<string, Record<string, Record<string, unknown>>>;
      tags: { name: string }[];
    }>();
    const list = doc.paths['/dashboard/product/lists']?.get;
    expect(list).toMatchObject({
      operationId: 'product.list',
      tags: ['products'],
      'x-required-scope': 'products:read',
    });
    expect(list?.parameters).toContainEqual({
      name: 'page_size',
      in: 'query',
      required: false,
      schema: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
    });
    const rename = doc.paths['/dashboard/product/rename/{product_id}']?.post;
    expect(rename).toMatchObject({
      operationId: 'product.rename',
      'x-required-scope': 'catalogue:write',
    });
    expect(JSON.stringify(rename?.requestBody)).toContain('"maxLength":64');
    expect(doc.tags.map((t) => t.name)).toContain('catalogue');
  });
});

describe('a declared write with an Idempotency-Key', () => {
  afterEach(() => vi.useRealTimers());

  /** A rename of the dashboard's product on a lane of its own, with this key. */
  function renameOnLane(lane: string, key: string) {
    const settings = { ...withDeclared, PLATFORM_BASE_URL: `${UPSTREAM}/__lane/${lane}` };
    return call(settings, `/dashboard/product/rename/${dashboard.productId}`, {
      method: 'POST',
      json: { product_name: 'Renamed once' },
      headers: { 'idempotency-key': key },
    });
  }

  it('keeps the answer of a write whose answer was lost upstream: the retry gets it back, the platform acts once', async () => {
    const lane = `declost${crypto.randomUUID().slice(0, 8)}`;
    await injectFault({
      lane,
      path: `/dashboard/product/rename/${dashboard.productId}`,
      kind: 'lost_answer',
    });
    const key = `key-${crypto.randomUUID()}`;
    const first = await renameOnLane(lane, key);
    expect(first.res.status).toBe(502);
    expect(first.body.code).toBe(ERRORS.UPSTREAM_UNREACHABLE.code);
    // Not 409 (40901, still in flight): the claim was settled with the answer.
    const again = await renameOnLane(lane, key);
    expect(again.res.status).toBe(502);
    expect(again.res.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.code).toBe(first.body.code);
    expect(await upstreamSaw(first.id)).toHaveLength(1);
    expect(await upstreamSaw(again.id)).toHaveLength(0);
  });

  it('frees the key of a write the platform never took (it asked for a pause): the retry goes through', async () => {
    const lane = `decpause${crypto.randomUUID().slice(0, 8)}`;
    await injectFault({ lane, kind: 'status', status: 503, retry_after: 1 });
    const key = `key-${crypto.randomUUID()}`;
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const paused = await renameOnLane(lane, key);
    expect(paused.body.code).toBe(ERRORS.UPSTREAM_BACKING_OFF.code);
    // The gateway's clock moves past the pause the platform asked for.
    vi.setSystemTime(Date.now() + secondsHeader(paused.res, 'retry-after') * 1000 + 100);
    const retried = await renameOnLane(lane, key);
    expect(retried.res.status).toBe(200);
    expect(retried.body.data.product_name).toBe('Renamed once');
    expect(retried.res.headers.get('idempotent-replayed')).toBeNull();
  });
});

describe('a declared path parameter typed only as a string', () => {
  const loose = {
    PLATFORM_OPERATIONS: JSON.stringify({
      'product.rename': {
        ...DECLARED['product.rename'],
        params: { type: 'object', properties: { product_id: { type: 'string', maxLength: 200 } } },
      },
    }),
  };
  const rename = (id: string) =>
    call(loose, `/dashboard/product/rename/${id}`, {
      method: 'POST',
      json: { product_name: 'x' },
    });

  it.each([
    '..%2F',
    '..%2Fadmin',
    '%2e%2e%2fadmin',
    'x%2F..%2Fy',
    '..%5C',
    '%252e%252e',
    '%25252e%25252e%25252f',
    '..%3Bx',
  ])('never carries a dot segment upstream: %s is refused, naming the parameter', async (id) => {
    const answer = await rename(id);
    const body = await expectRefusal(answer, 'VALIDATION_FAILED');
    expect(body.msg).toContain('product_id must not be . or ..');
    expect(await upstreamSaw(answer.id)).toEqual([]);
  });

  it.each(['%2e%2e', '%2E%2E', '.%2e', '%2e'])(
    '%s alone is a dot segment of the request path itself: resolved before routing, never sent',
    async (id) => {
      const answer = await rename(id);
      await expectRefusal(answer, 'NOT_FOUND');
      expect(await upstreamSaw(answer.id)).toEqual([]);
    },
  );

  it('passes dots that are no segment of their own', async () => {
    const answer = await rename('v1.2..3');
    // The emulator knows no such product: what matters is the path it was asked for.
    const [seen] = await upstreamSaw(answer.id);
    expect(seen?.path).toBe('/dashboard/product/rename/v1.2..3');
  });
});

describe('a declared pattern', () => {
  const patterned = (pattern: string) => ({
    MAX_BODY_BYTES: String(2 * 1024 * 1024),
    PLATFORM_OPERATIONS: JSON.stringify({
      'product.rename': {
        ...DECLARED['product.rename'],
        body: {
          type: 'object',
          properties: { product_name: { type: 'string', minLength: 1, maxLength: 64, pattern } },
          required: ['product_name'],
        },
      },
    }),
  });
  const rename = (settings: Record<string, string>, product_name: string) =>
    call(settings, `/dashboard/product/rename/${dashboard.productId}`, {
      method: 'POST',
      json: { product_name },
    });

  it('checks a value before anything goes upstream, naming the pattern as written', async () => {
    const words = patterned('^[A-Za-z][A-Za-z0-9]*( [A-Za-z0-9]+)*$');
    const ok = await rename(words, 'Renamed widget 2');
    expect([ok.res.status, ok.body.data.product_name]).toEqual([200, 'Renamed widget 2']);
    const refused = await rename(words, 'two  spaces');
    const body = await expectRefusal(refused, 'VALIDATION_FAILED');
    expect(body.msg).toContain('must match /^[A-Za-z][A-Za-z0-9]*( [A-Za-z0-9]+)*$/');
    expect(await upstreamSaw(refused.id)).toEqual([]);
  });

  it('never runs on a text longer than its maxLength: a million letters are refused for their length', async () => {
    // Unanchored, this pattern tries every start: run on a million letters it takes half an hour.
    const refused = await rename(patterned('[a-z]*[0-9]'), 'a'.repeat(1_000_000));
    const body = await expectRefusal(refused, 'VALIDATION_FAILED');
    expect(body.msg).toContain('must be at most 64 characters');
    expect(await upstreamSaw(refused.id)).toEqual([]);
  });
});

describe('presets follow groups that appear later', () => {
  it('a full token issued before a group was declared reaches it; a narrow one does not', async () => {
    // Issued under settings that know no `catalogue` group.
    const full = await createTenant(platformKeys.demo, 'full before');
    const narrow = await createTenant(platformKeys.demo, 'narrow before', ['products:write']);
    const path = `/dashboard/product/rename/${dashboard.productId}`;
    const json = { product_name: 'Later' };
    const ok = await call(withDeclared, path, { method: 'POST', json, token: full.token });
    expect(ok.res.status).toBe(200);
    const refused = await call(withDeclared, path, { method: 'POST', json, token: narrow.token });
    expect((await expectRefusal(refused, 'SCOPE_REQUIRED')).data.scope).toBe('catalogue:write');
  });
});

describe('a bad PLATFORM_OPERATIONS', () => {
  const refusedWith = async (value: unknown) => {
    const res = await gatewayWith({ PLATFORM_OPERATIONS: JSON.stringify(value) }, '/healthz');
    const body = await expectRefusal(res, 'MISCONFIGURED');
    return body.msg;
  };
  const entry = DECLARED['product.list'];

  it.each([
    [
      'a field of the entry',
      { 'product.x': { ...entry, method: 'FETCH' } },
      'PLATFORM_OPERATIONS.product.x.method: must be GET, POST',
    ],
    [
      'a missing field',
      { 'product.x': { ...entry, group: undefined } },
      'PLATFORM_OPERATIONS.product.x.group: is required',
    ],
    [
      'an unknown field',
      { 'product.x': { ...entry, colour: 1 } },
      'PLATFORM_OPERATIONS.product.x: unknown field colour',
    ],
    [
      'a built-in id',
      { 'team.list': entry },
      'PLATFORM_OPERATIONS.team.list: is the id of a built-in operation',
    ],
    [
      "a gateway route's name",
      { 'usage.own': entry },
      "PLATFORM_OPERATIONS.usage.own: is the name of one of the gateway's own routes",
    ],
    [
      'a built-in path',
      { 'team.more': { ...entry, path: '/team/info/{id}' } },
      'PLATFORM_OPERATIONS.team.more.path: overlaps the built-in operation team.info',
    ],
    [
      "the gateway's own path",
      { 'x.y': { ...entry, path: '/admin/tenants' } },
      "PLATFORM_OPERATIONS.x.y.path: overlaps the gateway's own /admin/*",
    ],
    [
      'a query schema it cannot read',
      {
        'product.x': { ...entry, query: { type: 'object', properties: { q: { type: 'array' } } } },
      },
      'PLATFORM_OPERATIONS.product.x.query.properties.q: must be a string, integer, number or boolean',
    ],
    [
      'a body schema zod cannot convert',
      {
        'product.x': {
          ...entry,
          method: 'POST',
          cache: undefined,
          body: { type: 'object', not: { type: 'string' } },
        },
      },
      'PLATFORM_OPERATIONS.product.x.body: not is not supported',
    ],
    [
      'a cached write',
      { 'product.x': { ...entry, method: 'POST' } },
      'PLATFORM_OPERATIONS.product.x.cache: only a GET operation is cached',
    ],
    [
      'params that miss a placeholder',
      {
        'product.x': {
          ...entry,
          path: '/dashboard/x/{a}',
          params: { type: 'object', properties: { b: { type: 'string' } } },
        },
      },
      "PLATFORM_OPERATIONS.product.x.params.properties: must name exactly the path's placeholders (a)",
    ],
    [
      'a pattern that can backtrack catastrophically',
      {
        'product.x': {
          ...entry,
          query: {
            type: 'object',
            properties: { q: { type: 'string', maxLength: 30, pattern: '(a+)+$' } },
          },
        },
      },
      'PLATFORM_OPERATIONS.product.x.query.properties.q.pattern: can backtrack catastrophically',
    ],
    [
      'a pattern on a string without maxLength',
      {
        'product.x': {
          ...entry,
          query: { type: 'object', properties: { q: { type: 'string', pattern: '^[a-z]+$' } } },
        },
      },
      'PLATFORM_OPERATIONS.product.x.query.properties.q.maxLength: must be given, at most 1024, with a pattern',
    ],
    [
      'the id __proto__ (which a parsed object would not keep)',
      JSON.parse(`{"__proto__": ${JSON.stringify(entry)}}`),
      'PLATFORM_OPERATIONS.__proto__: operation id must not be or contain __proto__',
    ],
    [
      'the id constructor',
      { constructor: entry },
      'PLATFORM_OPERATIONS.constructor: operation id must not be or contain constructor',
    ],
    [
      'an id with a prototype name as a word',
      { 'product.prototype': entry },
      'PLATFORM_OPERATIONS.product.prototype: operation id must not be or contain prototype',
    ],
    ['not an object', [], 'PLATFORM_OPERATIONS: must be a JSON object keyed by operation id'],
  ])('names %s', async (_what, value, says) => {
    expect(await refusedWith(value)).toContain(says);
  });
});

describe('ROUTE_OVERRIDES amends a built-in schema', () => {
  it("session.create takes the operator's body schema, and refuses what it refuses", async () => {
    const settings = {
      ROUTE_OVERRIDES: JSON.stringify({
        'session.create': {
          body: {
            type: 'object',
            properties: {
              task: { type: 'string', maxLength: 100 },
              priority: { type: 'integer', minimum: 1, maximum: 5 },
            },
            required: ['task', 'priority'],
          },
        },
      }),
    };
    const made = await call(settings, '/session/create', {
      method: 'POST',
      json: { task: 'Find flights', priority: 2 },
    });
    expect(made.res.status).toBe(200);
    const [seen] = await upstreamSaw(made.id);
    expect(JSON.parse(seen?.body ?? 'null')).toEqual({ task: 'Find flights', priority: 2 });
    const refused = await call(settings, '/session/create', {
      method: 'POST',
      json: { task: 'Find flights', priority: 9 },
    });
    expect((await expectRefusal(refused, 'VALIDATION_FAILED')).msg).toContain(
      'priority: must be at most 5',
    );
    const old = await call(settings, '/session/create', {
      method: 'POST',
      json: { task: 'x', priority: 1, mode: 'marketing' },
    });
    await expectRefusal(old, 'UNKNOWN_PARAMETER');
    expect(await upstreamSaw(refused.id)).toEqual([]);
  });

  it('refuses the id __proto__, which a parsed object would not keep, and names the field of an entry', async () => {
    const proto = await gatewayWith({ ROUTE_OVERRIDES: '{"__proto__": {"cost": 5}}' }, '/healthz');
    expect((await expectRefusal(proto, 'MISCONFIGURED')).msg).toContain(
      'ROUTE_OVERRIDES.__proto__: operation id must not be or contain __proto__',
    );
    const field = await gatewayWith(
      { ROUTE_OVERRIDES: JSON.stringify({ 'team.info': { cost: 'lots' } }) },
      '/healthz',
    );
    expect((await expectRefusal(field, 'MISCONFIGURED')).msg).toContain(
      'ROUTE_OVERRIDES.team.info.cost',
    );
  });

  it('names the field of a schema it cannot use', async () => {
    const res = await gatewayWith(
      { ROUTE_OVERRIDES: JSON.stringify({ 'team.info': { body: { type: 'object' } } }) },
      '/healthz',
    );
    expect((await expectRefusal(res, 'MISCONFIGURED')).msg).toContain(
      'ROUTE_OVERRIDES.team.info.body: cannot be amended: it takes no JSON body',
    );
  });
});
