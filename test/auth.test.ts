/** Tenant tokens: the three ways to present one, and every way to get it wrong. */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { ERRORS } from '../src/errors';
import { tokenKey } from '../src/tenants/kv-keys';
import { hashToken } from '../src/tenants/token';
import {
  asTenant,
  createTenant,
  envelope,
  expectRefusal,
  gateway,
  legacyFormatToken,
  platformKeys,
  requestId,
  type TestTenant,
  testEnv,
  unissuedToken,
  upstreamSaw,
} from './helpers';

let tenant: TestTenant;
let unissued: string;
beforeAll(async () => {
  tenant = await createTenant();
  unissued = await unissuedToken();
});

describe('presenting the token', () => {
  it.each([
    ['Authorization: Bearer <token>', () => ({ authorization: `Bearer ${tenant.token}` })],
    [
      'a bare Authorization: <token>, as platform clients send',
      () => ({ authorization: tenant.token }),
    ],
    ['x-api-key: <token>', () => ({ 'x-api-key': tenant.token })],
  ])('%s', async (_, headers) => {
    const { res, body } = await asTenant(tenant, '/user/call/lists', { headers: headers() });
    expect(res.status).toBe(200);
    expect(body.code).toBe(0);
  });
});

describe('refusing the token', () => {
  const cases: [string, () => Record<string, string>, keyof typeof ERRORS][] = [
    ['no token at all', () => ({}), 'MISSING_TOKEN'],
    // An API client's empty token box (the /docs reference sends the scheme alone).
    ['the scheme and no token', () => ({ authorization: 'Bearer ' }), 'MISSING_TOKEN'],
    ['a token of the wrong shape', () => ({ authorization: 'Bearer hello' }), 'INVALID_TOKEN'],
    [
      'a token with a bad checksum',
      () => ({
        authorization: `Bearer ${tenant.token.slice(0, -1)}${tenant.token.endsWith('A') ? 'B' : 'A'}`,
      }),
      'INVALID_TOKEN',
    ],
    [
      'a well-formed token nobody issued',
      () => ({ authorization: `Bearer ${unissued}` }),
      'INVALID_TOKEN',
    ],
    [
      'a legacy-format token nobody issued',
      () => ({ authorization: `Bearer ${legacyFormatToken()}` }),
      'INVALID_TOKEN',
    ],
    [
      'a platform key instead of a gateway token',
      () => ({ 'x-api-key': platformKeys.demo }),
      'INVALID_TOKEN',
    ],
  ];
  it.each(cases)('%s: 401 envelope, nothing forwarded', async (_, headers, kind) => {
    const id = requestId();
    const res = await gateway('/team/lists', { headers: { ...headers(), 'x-request-id': id } });
    const body = await envelope(res);
    expect(res.status).toBe(401);
    expect(body.code).toBe(ERRORS[kind].code);
    expect(body.data.request_id).toBe(id);
    expect(await upstreamSaw(id)).toEqual([]);
  });

  it('never echoes the presented token', async () => {
    const wrong = await unissuedToken();
    const res = await gateway('/team/lists', { headers: { authorization: wrong } });
    const text = await res.text();
    expect(res.status).toBe(401);
    expect(JSON.parse(text).code).toBe(ERRORS.INVALID_TOKEN.code);
    expect(text).not.toContain(wrong);
  });
});

describe('operator API', () => {
  it('creates a tenant: the token is shown once, the key never', async () => {
    const res = await gateway('/admin/tenants', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${testEnv.ADMIN_TOKEN}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ name: 'Acme', platform_key: 'sk-emu-secret-key-value' }),
    });
    const body = await envelope(res);
    expect(res.status).toBe(201);
    expect(body.code).toBe(0);
    expect(body.data.tenant_id).toMatch(/^ten_/);
    expect(body.data.token).toMatch(/^apgw_[0-9A-Za-z]{52}$/);
    expect(JSON.stringify(body)).not.toContain('sk-emu-secret-key-value');

    const shown = await gateway(`/admin/tenants/${body.data.tenant_id}`, {
      headers: { authorization: `Bearer ${testEnv.ADMIN_TOKEN}` },
    });
    const tenantView = await envelope(shown);
    expect(tenantView.data).toMatchObject({
      id: body.data.tenant_id,
      name: 'Acme',
      status: 'active',
    });
    const text = JSON.stringify(tenantView);
    expect(text).not.toContain('sk-emu-secret-key-value');
    expect(text).not.toContain(body.data.token);
  });

  it('stores only the hash of a token in KV', async () => {
    const { keys } = await testEnv.TENANTS.list();
    // The token's record is there, under its hash: the scan below looks at real entries.
    expect(keys.map((k) => k.name)).toContain(tokenKey(await hashToken(tenant.token)));
    for (const { name } of keys) expect(name).not.toContain(tenant.token);
    const values = await Promise.all(keys.map((k) => testEnv.TENANTS.get(k.name)));
    for (const value of values) expect(value).not.toContain(tenant.token);
  });

  it.each([
    ['no admin token', {}],
    ['a wrong admin token', { authorization: 'Bearer not-the-admin-token-at-all' }],
    ['the admin token without Bearer', { authorization: testEnv.ADMIN_TOKEN! }],
  ])('refuses %s with 401', async (_, headers) => {
    const res = await gateway('/admin/tenants/ten_0000000000000000', { headers });
    expect(res.status).toBe(401);
    expect((await envelope(res)).code).toBe(ERRORS.ADMIN_UNAUTHORIZED.code);
  });

  it('once an address is throttled, refuses every operator token from it, the right one too, alike', async () => {
    const ip = `198.51.100.${Math.floor(Math.random() * 250)}`;
    const call = (token: string) =>
      gateway('/admin/tenants', {
        headers: { authorization: `Bearer ${token}`, 'cf-connecting-ip': ip },
      });
    const statuses: number[] = [];
    for (let i = 0; i < 80; i++) {
      const res = await call(`wrong-operator-token-${i}`);
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    expect(statuses.slice(0, 60)).toEqual(Array(60).fill(401));
    expect(statuses.slice(61)).toEqual(Array(19).fill(429));
    // A wrong guess and the right token now get the same answer.
    const wrong = await call('wrong-operator-token-last');
    const right = await call(testEnv.ADMIN_TOKEN!);
    const [w, r] = [await envelope(wrong), await envelope(right)];
    expect([right.status, r.code, r.msg, r.data.policy]).toEqual([
      wrong.status,
      w.code,
      w.msg,
      w.data.policy,
    ]);
    expect([right.status, r.code, r.data.policy]).toEqual([429, 42900, 'failed-admin-auth']);
    expect(Object.keys(r.data).sort()).toEqual(Object.keys(w.data).sort());
    expect(Number(right.headers.get('retry-after'))).toBeLessThanOrEqual(60);
    expect(Number(right.headers.get('retry-after'))).toBeGreaterThan(0);
    // One audit entry for the episode, whatever the number of refused attempts.
    const log = await envelope(
      await gateway('/admin/audit?action=admin.auth_throttled&page_size=100', {
        headers: { authorization: `Bearer ${testEnv.ADMIN_TOKEN}` },
      }),
    );
    const episodes = log.data.data.filter((e: { ip: string }) => e.ip === ip);
    expect(episodes).toHaveLength(1);
    expect(episodes[0]).toMatchObject({ actor: 'unknown', detail: { network: ip } });
    // Once the window has passed, the right token is let in again.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 61_000 });
    try {
      const later = await call(testEnv.ADMIN_TOKEN!);
      expect(later.status).toBe(200);
    } finally {
      vi.useRealTimers();
    }
  });

  it('refuses a bad tenant body with the field named', async () => {
    const res = await gateway('/admin/tenants', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${testEnv.ADMIN_TOKEN}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ name: 'no key' }),
    });
    expect((await expectRefusal(res, 'VALIDATION_FAILED')).msg).toContain(
      'platform_key is required',
    );
  });

  it('answers 404 for an unknown tenant', async () => {
    const res = await gateway('/admin/tenants/ten_0000000000000000', {
      headers: { authorization: `Bearer ${testEnv.ADMIN_TOKEN}` },
    });
    expect(res.status).toBe(404);
    expect((await envelope(res)).code).toBe(ERRORS.RESOURCE_NOT_FOUND.code);
  });
});
