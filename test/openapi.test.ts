/**
 * The partner contract (GET /openapi.json) against the operation table it is
 * generated from: every BUILT_IN_OPERATIONS entry and nothing else, with parameters,
 * required flags, bounds, enums, formats and defaults that match what the
 * zod schemas actually accept; the per-token view; the operator document
 * against the operator API's real routes; the README's operation table; /docs.
 */
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import pkg from '../package.json';
import readme from '../README.md?raw';
import { adminRoutes } from '../src/admin';
import { ERRORS } from '../src/errors';
import { openApiPath } from '../src/openapi/document';
import { DOCS_CSP } from '../src/openapi/routes';
import { BUILT_IN_OPERATIONS, takesIdempotencyKey } from '../src/operations/table';
import { expandScopes, hasScope, requiredScope } from '../src/tenants/scopes';
import type { PlatformOperation } from '../src/types/operations';
import { admin, createTenant, envelope, gateway, gatewayWith, revokeWhileKvLags } from './helpers';

type Json = Record<string, any>;

async function documentFor(headers: Record<string, string> = {}): Promise<Json> {
  const res = await gateway('/openapi.json', { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('application/json');
  return (await res.json()) as Json;
}

const operations = (doc: Json) =>
  Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ path, method, op })),
  );

const GATEWAY_OPERATIONS = [
  'auth.browser_token',
  'usage.own',
  'usage.requests',
  'session.events',
  'token.own',
  'token.rotate',
];

function shapeOf(schema: z.ZodType | undefined): Record<string, z.ZodType> {
  if (!schema) return {};
  if (schema instanceof z.ZodObject) return schema.shape as Record<string, z.ZodType>;
  // session.create's body: an object, then the default of its earlier shape.
  if (schema instanceof z.ZodPipe) return shapeOf(schema.in as z.ZodType);
  throw new Error('route schemas are objects');
}

const accepts = (field: z.ZodType, value: unknown) => field.safeParse(value).success;

/**
 * What the document says about one field is what zod does with it: bounds,
 * enums, formats, patterns, lengths and the default. `wire` turns a number
 * into what the field receives (query and path values arrive as text).
 */
function expectSameField(doc: Json, field: z.ZodType, wire: (n: number) => unknown) {
  if (doc.type === 'integer') {
    expect(accepts(field, wire(doc.minimum))).toBe(true);
    expect(accepts(field, wire(doc.maximum))).toBe(true);
    if (doc.minimum > 0) expect(accepts(field, wire(doc.minimum - 1))).toBe(false);
    if (doc.maximum < Number.MAX_SAFE_INTEGER) {
      expect(accepts(field, wire(doc.maximum + 1))).toBe(false);
    } else expect(accepts(field, wire(10 ** 17))).toBe(false);
    expect(accepts(field, wire(doc.minimum + 0.5))).toBe(false);
  }
  if (Array.isArray(doc.enum)) {
    for (const value of doc.enum) expect(accepts(field, value)).toBe(true);
    expect(accepts(field, 'not-a-member')).toBe(false);
  }
  if (doc.format === 'uuid') {
    expect(accepts(field, crypto.randomUUID())).toBe(true);
    expect(accepts(field, 'not-a-uuid')).toBe(false);
  }
  if (doc.format === 'date') {
    expect(accepts(field, '2026-01-31')).toBe(true);
    expect(accepts(field, '2026-13-01')).toBe(false);
  }
  if (doc.format === 'date-time') {
    expect(accepts(field, '2026-01-31T10:00:00Z')).toBe(true);
    expect(accepts(field, 'yesterday')).toBe(false);
  }
  if (typeof doc.pattern === 'string') {
    const pattern = new RegExp(doc.pattern);
    for (const sample of ['abc', 'a.b', '.x', 'a/b', 'a b', 'sess_1:2-3', 'x'.repeat(129)]) {
      expect(accepts(field, sample), sample).toBe(pattern.test(sample));
    }
  }
  if (doc.type === 'string' && typeof doc.maxLength === 'number') {
    expect(accepts(field, 'a'.repeat(doc.maxLength + 1))).toBe(false);
    if (!doc.pattern && !doc.format) expect(accepts(field, 'a'.repeat(doc.maxLength))).toBe(true);
    if (doc.minLength > 0) expect(accepts(field, 'a'.repeat(doc.minLength - 1))).toBe(false);
  }
  if ('default' in doc) expect(field.parse(undefined)).toEqual(doc.default);
}

describe('GET /openapi.json, without a token', () => {
  it('is OpenAPI 3.1 at the gateway version, with the three token schemes', async () => {
    const doc = await documentFor();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe(pkg.version);
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual([
      'apiKeyHeader',
      'browserToken',
      'gatewayToken',
    ]);
    expect(doc.components.securitySchemes.apiKeyHeader).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'x-api-key',
    });
  });

  it('lists every route of the table and the gateway operations, and nothing else', async () => {
    const doc = await documentFor();
    const listed = operations(doc).map(
      ({ path, method, op }) => `${op.operationId} ${method} ${path}`,
    );
    const expected = [
      ...BUILT_IN_OPERATIONS.map((s) => `${s.id} ${s.method.toLowerCase()} ${openApiPath(s.path)}`),
      'auth.browser_token post /auth/browser-token',
      'usage.own get /usage',
      'usage.requests get /usage/requests',
      'session.events get /session/ws/{session_id}',
      'token.own get /token',
      'token.rotate post /token/rotate',
    ];
    expect(listed.sort()).toEqual(expected.sort());
  });

  it.each(BUILT_IN_OPERATIONS.map((s) => [s.id, s] as const))(
    '%s: tag, scope, parameters, bounds, enums, formats and defaults as zod has them',
    async (_id, spec: PlatformOperation) => {
      const doc = await documentFor();
      const op = doc.paths[openApiPath(spec.path)][spec.method.toLowerCase()];
      expect(op.tags).toEqual([spec.group]);
      expect(op['x-required-scope']).toBe(requiredScope(spec));
      expect(op.description).toContain(requiredScope(spec));

      const params = shapeOf(spec.params);
      const query = shapeOf(spec.query);
      const all = (op.parameters ?? []) as Json[];
      // Writes take an optional Idempotency-Key header (docs/RESILIENCE.md); reads and uploads none.
      expect(all.filter((p) => p.in === 'header').map((p) => [p.name, p.required])).toEqual(
        takesIdempotencyKey(spec) ? [['Idempotency-Key', false]] : [],
      );
      const documented = all.filter((p) => p.in !== 'header');
      expect(documented.map((p) => `${p.in}:${p.name}`).sort()).toEqual(
        [
          ...Object.keys(params).map((n) => `path:${n}`),
          ...Object.keys(query).map((n) => `query:${n}`),
        ].sort(),
      );
      for (const p of documented) {
        const field = (p.in === 'path' ? params : query)[p.name] as z.ZodType;
        expect(p.required, p.name).toBe(p.in === 'path' || !accepts(field, undefined));
        // A repeated query parameter is refused, so the document never says array.
        expect(p.schema.type).not.toBe('array');
        expectSameField(p.schema, field, String);
      }

      if (spec.upload) {
        const form = op.requestBody.content['multipart/form-data'].schema as Json;
        expect(form.required).toEqual([spec.upload.fileField]);
        expect(form.properties[spec.upload.fileField].maxItems).toBe(spec.upload.maxFiles);
        expect(Object.keys(form.properties).sort()).toEqual(
          [spec.upload.fileField, ...Object.keys(shapeOf(spec.upload.fields))].sort(),
        );
        return;
      }
      if (!spec.body) {
        expect(op.requestBody).toBeUndefined();
        return;
      }
      const body = op.requestBody.content['application/json'].schema as Json;
      const fields = shapeOf(spec.body);
      expect(body.additionalProperties).toBe(false);
      expect(Object.keys(body.properties).sort()).toEqual(Object.keys(fields).sort());
      for (const [name, schema] of Object.entries(body.properties as Record<string, Json>)) {
        const field = fields[name] as z.ZodType;
        expect((body.required ?? []).includes(name), name).toBe(!accepts(field, undefined));
        expectSameField(schema, field, (n) => n);
      }
    },
  );

  it('answers cached reads with X-Cache and Age, and every operation with the headers of limits', async () => {
    const doc = await documentFor();
    for (const spec of BUILT_IN_OPERATIONS) {
      const ok = doc.paths[openApiPath(spec.path)][spec.method.toLowerCase()].responses['200'];
      const headers = Object.keys(ok.headers);
      expect(headers).toEqual(
        expect.arrayContaining(['X-Request-ID', 'RateLimit', 'RateLimit-Policy']),
      );
      expect(headers.includes('X-Cache')).toBe(Boolean(spec.cache));
    }
    expect(Object.keys(doc.components.responses.E429.headers)).toContain('Retry-After');
  });

  it("is the same whatever the operator's route overrides say", async () => {
    const overrides = {
      'session.create': { upstream_path: '/v2/session/create', cost: 20 },
      'team.info': { credential: 'x-api-key' },
    };
    const res = await gatewayWith({ ROUTE_OVERRIDES: JSON.stringify(overrides) }, '/openapi.json');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(await documentFor());
  });

  it('documents every error of the catalogue under its status, with its code', async () => {
    const doc = await documentFor();
    const statuses = [...new Set(Object.values(ERRORS).map((e) => e.status))];
    for (const status of statuses) {
      const response = doc.components.responses[`E${status}`];
      const codes = Object.values(ERRORS)
        .filter((e) => e.status === status)
        .map((e) => e.code);
      expect(response.content['application/json'].schema.allOf[1].properties.code.enum).toEqual(
        codes,
      );
    }
    expect(Object.keys(doc.components.responses)).toHaveLength(statuses.length);
  });

  it("matches the README's operation table: operation, method and path, scope", async () => {
    const doc = await documentFor();
    const rows = [
      ...readme.matchAll(
        /^\| ([a-z_]+\.[a-z_]+) \| ([A-Z]+) (\S+) \| (?:Authorization|x-api-key) \| (\S+) \|$/gm,
      ),
    ].map((m) => `${m[1]} ${m[2]?.toLowerCase()} ${m[3]} ${m[4]}`);
    const documented = operations(doc)
      .filter(({ op }) => !GATEWAY_OPERATIONS.includes(op.operationId))
      .map(
        ({ path, method, op }) => `${op.operationId} ${method} ${path} ${op['x-required-scope']}`,
      );
    expect(rows.sort()).toEqual(documented.sort());
  });
});

describe('GET /openapi.json with a token: its own view', () => {
  const scopeSets = [
    ['full'],
    ['read-only'],
    ['teams:read'],
    ['sessions:read', 'sessions:write'],
    ['calls:read', 'usage:read'],
    ['usage:read', 'token:rotate'],
    ['apikeys:read'],
    ['apikeys:admin', 'browsers:write'],
    ['agents:read', 'browsers:read'],
  ];

  it.each(scopeSets)('lists exactly what %s allows', async (...names: string[]) => {
    const tenant = await createTenant(undefined, 'openapi view', names);
    const doc = await documentFor({ authorization: `Bearer ${tenant.token}` });
    const granted = expandScopes(names).scopes;
    const expected = BUILT_IN_OPERATIONS.filter((s) => hasScope(granted, requiredScope(s))).map(
      (s) => s.id,
    );
    expected.push('auth.browser_token', 'token.own');
    if (granted.includes('usage:read')) expected.push('usage.own', 'usage.requests');
    if (granted.includes('token:rotate')) expected.push('token.rotate');
    if (granted.includes('sessions:read')) expected.push('session.events');
    const listed = operations(doc).map(({ op }) => op.operationId as string);
    expect(listed.sort()).toEqual(expected.sort());
  });

  it('keeps a token view private, and lets the public document be cached', async () => {
    const tenant = await createTenant(undefined, 'openapi view', ['teams:read']);
    const own = await gateway('/openapi.json', {
      headers: { authorization: `Bearer ${tenant.token}` },
    });
    expect(own.headers.get('cache-control')).toBe('private, no-store');
    expect(own.headers.get('vary')).toContain('Authorization');
    const open = await gateway('/openapi.json');
    expect(open.headers.get('cache-control')).toBe('public, max-age=300');
  });

  it('takes the token from x-api-key too', async () => {
    const tenant = await createTenant(undefined, 'openapi view', ['teams:read']);
    const doc = await documentFor({ 'x-api-key': tenant.token });
    expect(
      operations(doc)
        .map(({ op }) => op.operationId)
        .sort(),
    ).toEqual(['auth.browser_token', 'team.info', 'team.list', 'token.own'].sort());
  });

  it('never offers minting to a browser token', async () => {
    const tenant = await createTenant(undefined, 'openapi browser', ['full']);
    const origin = 'https://app.example.com';
    await admin(`/tenants/${tenant.id}`, {
      method: 'PATCH',
      body: JSON.stringify({ cors_origins: [origin] }),
    });
    const minted = await gateway('/auth/browser-token', {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ origin, scopes: ['teams:read'] }),
    });
    expect(minted.status).toBe(201);
    const { token } = (await envelope(minted)).data;
    const doc = await documentFor({ authorization: `Bearer ${token}`, origin });
    expect(
      operations(doc)
        .map(({ op }) => op.operationId)
        .sort(),
    ).toEqual(['team.info', 'team.list', 'token.own']);
  });

  it('refuses a token its TenantGuard has revoked, as a call would, before KV says so', async () => {
    const tenant = await createTenant(undefined, 'openapi revoked', ['teams:read']);
    // Exact mode: every request asks the guard, as a leased one does once its lease ends.
    await admin(`/tenants/${tenant.id}/limits`, {
      method: 'PUT',
      body: JSON.stringify({ policies: [], limiter: 'exact' }),
    });
    const remember = { TENANT_MEMO_TTL_MS: '60000' };
    const view = () =>
      gatewayWith(remember, '/openapi.json', {
        headers: { authorization: `Bearer ${tenant.token}` },
      });
    expect((await view()).status).toBe(200);
    await revokeWhileKvLags(tenant.id, tenant.token, tenant.tokenId);
    const res = await view();
    expect(res.status).toBe(401);
    expect((await envelope(res)).code).toBe(ERRORS.TOKEN_REVOKED.code);
  });

  it('refuses an unknown token with its envelope, not the whole document', async () => {
    const res = await gateway('/openapi.json', { headers: { authorization: 'Bearer apgw_nope' } });
    expect(res.status).toBe(401);
    const body = await envelope(res);
    expect(body.code).toBe(ERRORS.INVALID_TOKEN.code);
    expect(body.data.request_id).toBeTruthy();
  });
});

describe('GET /admin/openapi.json', () => {
  it('needs the operator token', async () => {
    const res = await gateway('/admin/openapi.json');
    expect(res.status).toBe(401);
    expect((await envelope(res)).code).toBe(ERRORS.ADMIN_UNAUTHORIZED.code);
  });

  it('lists exactly the routes the operator API has', async () => {
    const res = await admin('/openapi.json');
    expect(res.status).toBe(200);
    const doc = (await res.json()) as Json;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe(pkg.version);
    const listed = operations(doc).map(({ path, method }) => `${method} ${path}`);
    const routes = adminRoutes()
      .routes.filter((r) => r.method !== 'ALL')
      .map((r) => `${r.method.toLowerCase()} ${openApiPath(`/admin${r.path}`)}`);
    expect(listed.sort()).toEqual([...new Set(routes)].sort());
    // Defaults of the operator API's own paging come through too.
    const audit = doc.paths['/admin/audit'].get.parameters as Json[];
    expect(audit.find((p) => p.name === 'page_size')?.schema).toMatchObject({
      type: 'integer',
      default: 20,
    });
  });
});

describe('GET /docs', () => {
  it('serves the reference page under a strict Content-Security-Policy', async () => {
    const res = await gateway('/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toBe(DOCS_CSP);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toMatch(/script-src 'self'(;|$)/);
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).not.toMatch(/https?:/);
    const html = await res.text();
    // Only scripts from the gateway itself, none inline.
    const scripts = [...html.matchAll(/<script([^>]*)>/g)].map((m) => m[1]);
    expect(scripts).toEqual([' src="/docs/scalar.js"', ' src="/docs/init.js"']);
  });

  it('starts the page on the gateway’s own document, with the calls to Scalar’s servers off', async () => {
    const res = await gateway('/docs/init.js');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('javascript');
    const script = await res.text();
    expect(script).toContain("url: '/openapi.json'");
    expect(script).toContain('withDefaultFonts: false');
    expect(script).toContain('telemetry: false');
  });
});
