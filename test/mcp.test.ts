/**
 * `/mcp` inside workerd, over real HTTP to the emulator (docs/MCP.md): both protocol eras
 * on one endpoint with no session, tools per scope (a declared operation appearing with
 * its setting), a call of each method kind as the operation's own gateway request,
 * validation, a 429, revocation, masking, the request log, idempotent retries, Origin and
 * CORS, and the JSON-RPC faults of bad framing (never a 500).
 */
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ERRORS } from '../src/errors';
import type { Bindings } from '../src/types/context';
import {
  admin,
  countExactly,
  createTenant,
  envelope,
  gateway,
  gatewayWith,
  platformKeys,
  requestId,
  revokeWhileKvLags,
  type TestTenant,
  upstreamSaw,
} from './helpers';

const MODERN = '2026-07-28';
const META = {
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
};

interface Call {
  token?: string | null;
  era?: 'modern' | 'legacy';
  headers?: Record<string, string>;
  settings?: Partial<Bindings>;
  id?: string;
}

interface Answer {
  status: number;
  headers: Headers;
  id: string;
  body: any;
}

let serial = 0;

/** One JSON-RPC request to /mcp as a client of `era` sends it (headers mirrored for 2026-07-28). */
async function rpc(
  method: string,
  params: Record<string, unknown>,
  tenant: TestTenant | null,
  opts: Call = {},
): Promise<Answer> {
  const era = opts.era ?? 'modern';
  const id = opts.id ?? requestId('mcp');
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'x-request-id': id,
  };
  const token = opts.token === undefined ? tenant?.token : opts.token;
  if (token) headers.authorization = `Bearer ${token}`;
  let body = params;
  if (era === 'modern') {
    headers['mcp-protocol-version'] = MODERN;
    headers['mcp-method'] = method;
    if (method === 'tools/call') headers['mcp-name'] = String(params.name);
    body = { ...params, _meta: { ...META, ...(params._meta as object) } };
  } else if (method !== 'initialize') {
    headers['mcp-protocol-version'] = '2025-06-18';
  }
  const message = JSON.stringify({ jsonrpc: '2.0', id: ++serial, method, params: body });
  return post(message, { ...headers, ...opts.headers }, opts.settings, id);
}

async function post(
  message: string,
  headers: Record<string, string>,
  settings: Partial<Bindings> | undefined,
  id = requestId('mcp'),
): Promise<Answer> {
  const init = { method: 'POST', headers: { 'x-request-id': id, ...headers }, body: message };
  const res = settings ? await gatewayWith(settings, '/mcp', init) : await gateway('/mcp', init);
  const text = await res.text();
  return { status: res.status, headers: res.headers, id, body: text ? JSON.parse(text) : null };
}

const call = (
  tenant: TestTenant | null,
  name: string,
  args: Record<string, unknown>,
  opts: Call = {},
) => rpc('tools/call', { name, arguments: args }, tenant, opts);

/** Every tool a token sees, following nextCursor. */
async function allTools(tenant: TestTenant, opts: Call = {}) {
  const tools: any[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const { status, body } = await rpc('tools/list', cursor ? { cursor } : {}, tenant, opts);
    expect(status).toBe(200);
    tools.push(...body.result.tools);
    cursor = body.result.nextCursor;
    pages++;
  } while (cursor);
  return { tools, pages };
}

/** What a failed tool call's text says first, and the envelope after it. */
function failure(answer: Answer) {
  expect(answer.status).toBe(200);
  expect(answer.body.result.isError).toBe(true);
  const [said, json] = answer.body.result.content[0].text.split('\n');
  return { said: said as string, envelope: JSON.parse(json) };
}

/** The request log lines among captured console lines. */
function requestLines(lines: string[]): Record<string, unknown>[] {
  return lines.flatMap((l) => {
    try {
      const parsed = JSON.parse(l);
      return parsed.event === 'request' ? [parsed] : [];
    } catch {
      return [];
    }
  });
}

let tenant: TestTenant;
let readOnly: TestTenant;
beforeAll(async () => {
  tenant = await createTenant(platformKeys.demo, 'mcp');
  readOnly = await createTenant(platformKeys.demo, 'mcp read-only', ['read-only']);
});

afterEach(() => vi.restoreAllMocks());

describe('both protocol eras on one endpoint, no session', () => {
  it('answers the 2025 handshake: initialize, notifications/initialized, ping, tools/list', async () => {
    const init = await rpc(
      'initialize',
      {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'test', version: '1' },
      },
      tenant,
      { era: 'legacy' },
    );
    expect(init.status).toBe(200);
    expect(init.headers.get('mcp-session-id')).toBeNull();
    expect(init.body.result).toMatchObject({
      protocolVersion: '2025-06-18',
      capabilities: { tools: { listChanged: false } },
      serverInfo: { name: 'agent-platform-gateway' },
    });
    expect(init.body.result.instructions).toContain('request_id');
    // A revision it does not speak settles on its newest handshake one.
    const older = await rpc('initialize', { protocolVersion: '2024-11-05' }, tenant, {
      era: 'legacy',
    });
    expect(older.body.result.protocolVersion).toBe('2025-11-25');

    const note = await post(
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      {
        'content-type': 'application/json',
        authorization: `Bearer ${tenant.token}`,
        'mcp-protocol-version': '2025-06-18',
      },
      undefined,
    );
    expect({ status: note.status, body: note.body }).toEqual({ status: 202, body: null });
    const ping = await rpc('ping', {}, tenant, { era: 'legacy' });
    expect(ping.body.result).toEqual({});
    // Any isolate, no handshake needed first: tools/list stands alone.
    const list = await rpc('tools/list', {}, tenant, { era: 'legacy' });
    expect(list.body.result.tools.length).toBeGreaterThan(0);
    expect(list.body.result.resultType).toBeUndefined();
  });

  it('answers 2026-07-28: server/discover and results with resultType, no handshake methods', async () => {
    const discover = await rpc('server/discover', {}, tenant);
    expect(discover.status).toBe(200);
    expect(discover.body.result).toMatchObject({
      resultType: 'complete',
      supportedVersions: [MODERN, '2025-11-25', '2025-06-18'],
      capabilities: { tools: { listChanged: false } },
      cacheScope: 'public',
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'agent-platform-gateway' } },
    });
    expect(discover.body.result.ttlMs).toBeGreaterThan(0);
    const list = await rpc('tools/list', {}, tenant);
    expect(list.body.result).toMatchObject({ resultType: 'complete', cacheScope: 'private' });
    for (const gone of ['initialize', 'ping']) {
      const answer = await rpc(gone, {}, tenant);
      expect({ status: answer.status, code: answer.body.error.code }).toEqual({
        status: 404,
        code: -32601,
      });
    }
  });

  it('refuses what the 2026-07-28 transport names: versions, missing _meta, mismatched headers', async () => {
    const cases: [string, () => Promise<Answer>, number, number][] = [
      [
        'an unknown version',
        () =>
          post(
            JSON.stringify({
              jsonrpc: '2.0',
              id: 1,
              method: 'tools/list',
              params: {
                _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': '1999-01-01' },
              },
            }),
            {
              'content-type': 'application/json',
              authorization: `Bearer ${tenant.token}`,
              'mcp-protocol-version': '1999-01-01',
              'mcp-method': 'tools/list',
            },
            undefined,
          ),
        400,
        -32022,
      ],
      [
        'a 2026-07-28 header without _meta',
        () =>
          rpc('tools/list', {}, tenant, {
            era: 'legacy',
            headers: { 'mcp-protocol-version': MODERN },
          }),
        400,
        -32602,
      ],
      [
        'no client capabilities',
        () =>
          rpc(
            'tools/list',
            { _meta: { 'io.modelcontextprotocol/clientCapabilities': null } },
            tenant,
          ),
        400,
        -32602,
      ],
      [
        'Mcp-Method naming another method',
        () => rpc('tools/list', {}, tenant, { headers: { 'mcp-method': 'tools/call' } }),
        400,
        -32020,
      ],
      [
        'Mcp-Name naming another tool',
        () => call(tenant, 'team.list', {}, { headers: { 'mcp-name': 'agent.list' } }),
        400,
        -32020,
      ],
      [
        'a 2025 header of a revision it does not speak',
        () =>
          rpc('tools/list', {}, tenant, {
            era: 'legacy',
            headers: { 'mcp-protocol-version': '2024-11-05' },
          }),
        400,
        -32022,
      ],
      [
        'server/discover without _meta',
        () => rpc('server/discover', {}, tenant, { era: 'legacy' }),
        400,
        -32602,
      ],
    ];
    for (const [what, send, status, code] of cases) {
      const answer = await send();
      expect({ what, status: answer.status, code: answer.body.error?.code }).toEqual({
        what,
        status,
        code,
      });
      expect(answer.body.error.data.request_id, what).toBe(answer.id);
    }
    const unsupported = (await cases[0]?.[1]())?.body.error.data;
    expect(unsupported).toMatchObject({
      supported: [MODERN, '2025-11-25', '2025-06-18'],
      requested: '1999-01-01',
    });
    // A name in the Base64 sentinel form is decoded before it is compared.
    const encoded = await call(
      tenant,
      'team.list',
      {},
      { headers: { 'mcp-name': `=?base64?${btoa('team.list')}?=` } },
    );
    expect(encoded.body.result.isError).toBeUndefined();
  });
});

describe('bad framing gets the JSON-RPC error the spec names, never a 500', () => {
  const headers = () => ({
    'content-type': 'application/json',
    authorization: `Bearer ${tenant.token}`,
  });
  it.each([
    ['invalid JSON', '{"jsonrpc":"2.0",', 400, -32700],
    ['a batch', JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'ping' }]), 400, -32600],
    ['no jsonrpc member', JSON.stringify({ id: 1, method: 'ping' }), 400, -32600],
    ['a null id', JSON.stringify({ jsonrpc: '2.0', id: null, method: 'ping' }), 400, -32600],
    ['a fractional id', JSON.stringify({ jsonrpc: '2.0', id: 1.5, method: 'ping' }), 400, -32600],
    [
      'params as a list',
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: [] }),
      400,
      -32602,
    ],
    ['no method', JSON.stringify({ jsonrpc: '2.0', id: 1 }), 400, -32600],
    [
      'an unknown method (2025)',
      JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'resources/list' }),
      200,
      -32601,
    ],
  ])('%s', async (_what, message, status, code) => {
    const answer = await post(message, headers(), undefined);
    expect({ status: answer.status, code: answer.body.error.code }).toEqual({ status, code });
    expect(answer.body.jsonrpc).toBe('2.0');
    expect(answer.body.error.data.request_id).toBe(answer.id);
  });

  it('refuses other media types, bodies over MAX_BODY_BYTES, tool calls without a name, and GET', async () => {
    const asText = await post('{}', { ...headers(), 'content-type': 'text/plain' }, undefined);
    expect({ status: asText.status, code: asText.body.error.code }).toEqual({
      status: 415,
      code: ERRORS.UNSUPPORTED_MEDIA_TYPE.code,
    });
    const big = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'ping',
      params: { pad: 'x'.repeat(2000) },
    });
    const tooLarge = await post(big, headers(), { MAX_BODY_BYTES: '1024' });
    expect({ status: tooLarge.status, code: tooLarge.body.error.code }).toEqual({
      status: 413,
      code: ERRORS.PAYLOAD_TOO_LARGE.code,
    });
    const nameless = await rpc('tools/call', { arguments: {} }, tenant, { era: 'legacy' });
    expect({ status: nameless.status, code: nameless.body.error.code }).toEqual({
      status: 200,
      code: -32602,
    });
    const notAnObject = await rpc('tools/call', { name: 'team.list', arguments: [1] }, tenant);
    expect(notAnObject.body.error.code).toBe(-32602);
    for (const method of ['GET', 'DELETE']) {
      const res = await gateway('/mcp', {
        method,
        headers: { authorization: `Bearer ${tenant.token}` },
      });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
      expect(((await res.json()) as any).error.code).toBe(ERRORS.METHOD_NOT_ALLOWED.code);
    }
  });

  it('answers 401 with a Bearer challenge without a token, or with one it does not know', async () => {
    const none = await rpc('tools/list', {}, null);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect(none.body.error.code).toBe(ERRORS.MISSING_TOKEN.code);
    for (const method of ['tools/list', 'tools/call']) {
      const bad = await rpc(method, { name: 'team.list' }, null, { token: 'apgw_not-a-token' });
      expect({ method, status: bad.status, code: bad.body.error.code }).toEqual({
        method,
        status: 401,
        code: ERRORS.INVALID_TOKEN.code,
      });
      expect(bad.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    }
  });
});

describe('tools from the catalog, per token', () => {
  it('shows a full token every operation but the upload and API keys, a page at a time, in name order', async () => {
    const { tools, pages } = await allTools(tenant);
    const names = tools.map((t) => t.name);
    expect(pages).toBe(2);
    expect(names).toEqual([...names].sort());
    expect(names).toContain('team.list');
    expect(names).toContain('session.create');
    expect(names).toContain('browser.release');
    expect(names).not.toContain('session.upload');
    // API key scopes are granted only explicitly: a full token has none.
    expect(names.filter((n) => n.startsWith('apikey.'))).toEqual([]);
    const bad = await rpc('tools/list', { cursor: '%%%' }, tenant);
    expect(bad.body.error.code).toBe(-32602);
  });

  it('shows a read-only token no write tool', async () => {
    const { tools } = await allTools(readOnly);
    expect(tools.length).toBeGreaterThan(10);
    for (const tool of tools) expect(tool.annotations.readOnlyHint, tool.name).toBe(true);
    expect(tools.map((t) => t.name)).not.toContain('session.create');
  });

  it('describes a tool with the schemas that validate its HTTP call, its model and its effect', async () => {
    const { tools } = await allTools(tenant);
    const tool = (name: string) => tools.find((t) => t.name === name);
    const openapi = await envelope(await gateway('/openapi.json'));
    const params = (openapi as any).paths['/team/lists'].get.parameters;
    const teamList = tool('team.list');
    expect(teamList.title).toBe('List teams');
    expect(teamList.description).toContain('team_id');
    expect(teamList.inputSchema).toMatchObject({ type: 'object', additionalProperties: false });
    for (const p of params) expect(teamList.inputSchema.properties[p.name]).toEqual(p.schema);
    expect(teamList.outputSchema.properties.data.items).toEqual({ $ref: '#/$defs/Team' });
    expect(teamList.outputSchema.$defs.Team.type).toBe('object');
    expect(teamList.annotations).toEqual({
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    });
    // Path and body merged: the path's session_id, the body's title.
    const rename = tool('session.rename');
    expect(rename.inputSchema.required).toEqual(['session_id', 'title']);
    expect(rename.inputSchema.properties.idempotency_key.maxLength).toBe(255);
    expect(rename.annotations).toMatchObject({ destructiveHint: true, idempotentHint: true });
    expect(tool('browser.release').annotations.destructiveHint).toBe(true);
    expect(tool('session.create').annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: false,
      openWorldHint: true,
    });
    expect(tool('session.create').description).toContain('Counts 5 units');
  });

  it('shows a declared operation while PLATFORM_OPERATIONS declares it, and calls it', async () => {
    const declared = {
      PLATFORM_OPERATIONS: JSON.stringify({
        'product.list': {
          method: 'GET',
          path: '/dashboard/product/lists',
          credential: 'x-api-key',
          group: 'products',
          title: 'List products',
          description: 'The products submitted for analysis, a page at a time.',
          query: {
            type: 'object',
            properties: {
              page_num: { type: 'integer', minimum: 1, default: 1 },
              status: { enum: ['all', 'pending', 'completed'] },
            },
          },
        },
      }),
    };
    const withIt = await allTools(tenant, { settings: declared });
    const tool = withIt.tools.find((t) => t.name === 'product.list');
    expect(tool).toMatchObject({
      title: 'List products',
      inputSchema: { properties: { status: { enum: ['all', 'pending', 'completed'] } } },
    });
    expect(tool.description).toContain("Declared by this gateway's operator");
    const without = await allTools(tenant);
    expect(without.tools.map((t) => t.name)).not.toContain('product.list');
    const called = await call(tenant, 'product.list', { status: 'all' }, { settings: declared });
    expect(called.body.result.structuredContent.page_num).toBe(1);
    const [seen] = await upstreamSaw(called.id);
    expect(seen).toMatchObject({
      path: '/dashboard/product/lists',
      query: { status: 'all', page_num: '1' },
    });
    const gone = await call(tenant, 'product.list', {});
    expect(gone.body.error).toMatchObject({ code: -32602, message: 'Unknown tool: product.list' });
  });

  it('answers a tool the token may not use exactly as one that does not exist, and calls nothing', async () => {
    const forbidden = await call(readOnly, 'session.create', { task: 'x' });
    const missing = await call(readOnly, 'session.nothing', { task: 'x' });
    const shape = (a: Answer) => ({
      status: a.status,
      code: a.body.error.code,
      message: a.body.error.message.replace(/: .*$/, ''),
      keys: Object.keys(a.body.error.data),
    });
    expect(shape(forbidden)).toEqual(shape(missing));
    expect(forbidden.body.error.message).toBe('Unknown tool: session.create');
    expect(await upstreamSaw(forbidden.id)).toEqual([]);
  });

  it('tells nothing of a tool before the token, its Origin and its scope hold', async () => {
    // Arguments refused before any request is made answer as an unknown tool to a token
    // that may not use the tool (browser.release needs a write scope the read-only token lacks).
    const badArgs = await call(readOnly, 'browser.release', {});
    const unknown = await call(readOnly, 'browser.nothing', {});
    expect(badArgs.body.error).toMatchObject({
      code: -32602,
      message: 'Unknown tool: browser.release',
    });
    expect(Object.keys(badArgs.body.error.data)).toEqual(Object.keys(unknown.body.error.data));
    // A token that may use it learns which argument was wrong.
    expect(failure(await call(tenant, 'browser.release', {})).envelope.code).toBe(40001);
    // No token, a made-up token, or a refused Origin: the same refusal, whatever the name.
    for (const name of ['browser.release', 'browser.nothing']) {
      const none = await call(null, name, {});
      expect([none.status, none.body.error.code]).toEqual([401, 40100]);
      const madeUp = await call(tenant, name, {}, { token: 'apgw_bogus' });
      expect(madeUp.status).toBe(401);
      const evil = await call(tenant, name, {}, { headers: { origin: 'https://evil.example' } });
      expect([evil.status, evil.body.error.code]).toEqual([403, 40301]);
    }
  });
});

describe('a call is the operation’s own gateway request', () => {
  it('counts a tool call once among the isolate’s requests', async () => {
    const requests = async () =>
      (await envelope(await admin('/stats'))).data.isolate.requests as number;
    const before = await requests();
    await call(tenant, 'team.list', { page_size: 5 });
    // The /mcp request, then this read of the counters: two, not three.
    expect((await requests()) - before).toBe(2);
  });

  it('calls a read, a create, a rename and a release with the platform key, never the token', async () => {
    const teams = await call(tenant, 'team.list', { page_size: 5 });
    const result = teams.body.result;
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent.page_size).toBe(5);
    expect(JSON.parse(result.content[0].text)).toEqual(result.structuredContent);
    expect(result._meta['apgw/request_id']).toBe(teams.id);
    expect(teams.headers.get('x-request-id')).toBe(teams.id);
    const teamId = result.structuredContent.data[0].team_id;

    const created = await call(tenant, 'session.create', {
      team_id: teamId,
      task: 'find travel planners',
      title: 'MCP',
    });
    const sessionId = created.body.result.structuredContent.session_id;
    expect(sessionId).toEqual(expect.any(String));
    const renamed = await call(tenant, 'session.rename', {
      session_id: sessionId,
      title: 'Renamed by an agent',
    });
    expect(renamed.body.result.isError).toBeUndefined();
    const info = await call(tenant, 'session.info', { session_id: sessionId });
    expect(
      info.body.result.structuredContent.name ?? info.body.result.structuredContent.title,
    ).toBe('Renamed by an agent');
    const browserId = info.body.result.structuredContent.browser_id;
    const released = await call(tenant, 'browser.release', { browser_id: browserId });
    expect(released.body.result.isError).toBeUndefined();

    const sent = [
      [teams.id, 'GET', '/team/lists', 'authorization'],
      [created.id, 'POST', '/session/create', 'x-api-key'],
      [renamed.id, 'PUT', `/session/info/${sessionId}`, 'x-api-key'],
      [released.id, 'DELETE', `/browser/release/${browserId}`, 'x-api-key'],
    ] as const;
    for (const [id, method, path, header] of sent) {
      const records = await upstreamSaw(id);
      expect(records.map((r) => [r.method, r.path])).toEqual([[method, path]]);
      expect(records[0]?.headers[header]).toBe(platformKeys.demo);
      expect(JSON.stringify(records)).not.toContain(tenant.token);
    }
    const [create] = await upstreamSaw(created.id);
    expect(JSON.parse(create?.body ?? '')).toEqual({
      team_id: teamId,
      task: 'find travel planners',
      title: 'MCP',
    });
  });

  it('turns validation errors into tool results naming the field', async () => {
    const badUuid = failure(await call(tenant, 'team.info', { team_id: 'not-a-uuid' }));
    expect(badUuid.envelope.code).toBe(ERRORS.VALIDATION_FAILED.code);
    expect(badUuid.said).toContain('team_id must be a UUID');
    expect(badUuid.envelope.data.errors[0]).toMatchObject({ location: 'path', field: 'team_id' });
    const range = failure(await call(tenant, 'team.list', { page_size: 1000 }));
    expect(range.envelope.data.errors[0]).toMatchObject({ location: 'query', field: 'page_size' });
    const unknown = failure(await call(tenant, 'team.list', { colour: 'blue' }));
    expect(unknown.envelope).toMatchObject({ code: ERRORS.UNKNOWN_PARAMETER.code });
    expect(unknown.said).toContain('colour');
    const missing = failure(await call(tenant, 'team.info', {}));
    expect(missing.envelope.data.errors[0]).toMatchObject({
      field: 'team_id',
      message: 'team_id is required',
    });
    const bodyField = failure(
      await call(tenant, 'session.create', { task: 'x', title: 'no team' }),
    );
    expect(bodyField.envelope.data.errors[0]).toMatchObject({ location: 'body', field: 'title' });
  });

  it('answers a 429 at a small limit as a tool error that says when to retry', async () => {
    const small = await createTenant(platformKeys.demo, 'mcp small');
    await admin(`/tenants/${small.id}/limits`, {
      method: 'PUT',
      body: JSON.stringify({
        policies: [{ name: 'tiny', limit: 1, window_s: 3600, algorithm: 'fixed' }],
        quota: {},
        limiter: 'exact',
      }),
    });
    expect((await call(small, 'agent.list', {})).body.result.isError).toBeUndefined();
    const refused = failure(await call(small, 'agent.list', {}));
    expect(refused.envelope).toMatchObject({
      code: ERRORS.RATE_LIMITED.code,
      data: { policy: 'tiny' },
    });
    expect(refused.said).toMatch(
      /^Error 42900: Rate limit "tiny" exceeded; retry in \d+ s \(request_id [^)]+\)\. Retry after \d+ s\.$/,
    );
  });

  it('refuses a revoked token at the next call, where only the TenantGuard knows yet', async () => {
    const t = await createTenant(platformKeys.demo, 'mcp revoked');
    const remember = { TENANT_MEMO_TTL_MS: '60000' };
    expect((await call(t, 'team.list', {}, { settings: remember })).status).toBe(200);
    await revokeWhileKvLags(t.id, t.token, t.tokenId);
    for (const method of ['tools/call', 'tools/list']) {
      const answer = await rpc(method, { name: 'team.list', arguments: {} }, t, {
        settings: remember,
      });
      expect({ method, status: answer.status, code: answer.body.error.code }).toEqual({
        method,
        status: 401,
        code: ERRORS.TOKEN_REVOKED.code,
      });
    }
  });

  it('masks platform secrets in a result for a token without apikeys:admin', async () => {
    const reader = await createTenant(platformKeys.demo, 'mcp keys', ['apikeys:read']);
    const listed = await call(reader, 'apikey.list', {});
    const result = listed.body.result;
    expect(result.isError).toBeUndefined();
    const keys = result.structuredContent.data.map((k: { api_key: string }) => k.api_key);
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) expect(key).toMatch(/…/);
    expect(JSON.stringify(listed.body)).not.toContain(platformKeys.demo);
  });

  it('is found in the request log by its request id, logged once, via mcp with its tool', async () => {
    const logged = await createTenant(platformKeys.demo, 'mcp logged');
    await countExactly(logged);
    const lines: string[] = [];
    for (const level of ['log', 'info', 'warn', 'error'] as const) {
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
        lines.push(args.map(String).join(' '));
      });
    }
    const answer = await call(logged, 'agent.list', { page_size: 3 });
    vi.restoreAllMocks();
    const written = requestLines(lines).filter((l) => l.request_id === answer.id);
    expect(written).toHaveLength(1);
    expect(written[0]).toMatchObject({
      route: 'agent.list',
      via: 'mcp',
      tool: 'agent.list',
      status: 200,
      code: 0,
    });
    // An exact-mode tenant's next request carries the row to its TenantGuard: the console finds it.
    await gateway('/agent/lists', { headers: { authorization: `Bearer ${logged.token}` } });
    const found = await envelope(
      await admin(`/tenants/${logged.id}/requests?request_id=${encodeURIComponent(answer.id)}`),
    );
    expect(found.data.requests).toEqual([
      expect.objectContaining({
        request_id: answer.id,
        operation: 'agent.list',
        via: 'mcp',
        status: 200,
      }),
    ]);
  });

  it('continues the trace in _meta, and keeps path values inside their segment', async () => {
    const traceId = 'ab'.repeat(16);
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((...args: unknown[]) => {
      lines.push(args.map(String).join(' '));
    });
    vi.spyOn(console, 'info').mockImplementation((...args: unknown[]) => {
      lines.push(args.map(String).join(' '));
    });
    const traced = await rpc(
      'tools/call',
      {
        name: 'agent.list',
        arguments: {},
        _meta: { traceparent: `00-${traceId}-${'cd'.repeat(8)}-01`, tracestate: 'x=\n' },
      },
      tenant,
    );
    vi.restoreAllMocks();
    expect(traced.body.result.isError).toBeUndefined();
    const line = requestLines(lines).find((l) => l.request_id === traced.id);
    expect(line?.trace_id).toBe(traceId);
    const [seen] = await upstreamSaw(traced.id);
    expect(seen?.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-`));

    const escaping = failure(
      await call(tenant, 'team.info', { team_id: '../../user/apikey/lists' }),
    );
    expect(escaping.envelope.data.errors[0]).toMatchObject({ field: 'team_id' });
    const dots = failure(await call(tenant, 'team.info', { team_id: '..' }));
    expect(dots.envelope.data.errors[0].message).toBe('team_id must not be . or ..');
  });

  it('deduplicates a write that carries an idempotency key, as an argument or in _meta', async () => {
    const args = { task: 'one session only', mode: 'marketing' };
    const first = await call(tenant, 'session.create', { ...args, idempotency_key: 'mcp-key-1' });
    const again = await call(tenant, 'session.create', { ...args, idempotency_key: 'mcp-key-1' });
    const id = first.body.result.structuredContent.session_id;
    expect(again.body.result.structuredContent.session_id).toBe(id);
    expect(again.body.result._meta['apgw/idempotent_replayed']).toBe(true);
    expect(await upstreamSaw(again.id)).toEqual([]);
    const viaMeta = { _meta: { 'apgw/idempotency_key': 'mcp-key-2' } };
    const a = await rpc(
      'tools/call',
      { name: 'session.create', arguments: args, ...viaMeta },
      tenant,
    );
    const b = await rpc(
      'tools/call',
      { name: 'session.create', arguments: args, ...viaMeta },
      tenant,
    );
    expect(b.body.result.structuredContent).toEqual(a.body.result.structuredContent);
    const reused = failure(
      await call(tenant, 'session.create', { task: 'another', idempotency_key: 'mcp-key-1' }),
    );
    expect(reused.envelope.code).toBe(ERRORS.IDEMPOTENCY_KEY_REUSED.code);
  });
});

describe('browsers: Origin and CORS', () => {
  const APP = 'https://app.example';
  it('refuses an Origin the token does not allow, and serves a browser token from its own', async () => {
    const t = await createTenant(platformKeys.demo, 'mcp browser');
    await admin(`/tenants/${t.id}`, {
      method: 'PATCH',
      body: JSON.stringify({ cors_origins: [APP] }),
    });
    for (const method of ['tools/list', 'tools/call']) {
      const evil = await rpc(method, { name: 'team.list', arguments: {} }, t, {
        headers: { origin: 'https://evil.example' },
      });
      expect({ method, status: evil.status, code: evil.body.error.code }).toEqual({
        method,
        status: 403,
        code: ERRORS.ORIGIN_NOT_ALLOWED.code,
      });
    }
    const minted = await envelope(
      await gateway('/auth/browser-token', {
        method: 'POST',
        headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ origin: APP, ttl_s: 600 }),
      }),
    );
    const browser = { ...t, token: minted.data.token as string };
    const fromApp = await call(browser, 'team.list', {}, { headers: { origin: APP } });
    expect(fromApp.body.result.isError).toBeUndefined();
    expect(fromApp.headers.get('access-control-allow-origin')).toBe(APP);
    const elsewhere = await call(
      browser,
      'team.list',
      {},
      { headers: { origin: 'https://other.example' } },
    );
    expect(elsewhere.status).toBe(403);

    const preflight = await gateway('/mcp', {
      method: 'OPTIONS',
      headers: {
        origin: APP,
        'access-control-request-method': 'POST',
        'access-control-request-headers':
          'authorization, content-type, mcp-protocol-version, mcp-method, mcp-name',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-headers')).toContain('mcp-protocol-version');
  });
});
