/**
 * The tenant lifecycle through the operator API: tenants, tokens with scopes,
 * expiry and rotation, platform key updates, sealed keys at rest, the audit log.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ERRORS, type ErrorKind } from '../src/errors';
import { BUILT_IN_OPERATIONS } from '../src/operations/table';
import { ALL_SCOPES, requiredScope } from '../src/tenants/scopes';
import {
  admin,
  asTenant,
  createTenant,
  envelope,
  expectRefusal,
  gatewayWith,
  platformKeys,
  type TestTenant,
  testEnv,
  upstreamSaw,
} from './helpers';

async function issue(tenant: { id: string }, spec: Record<string, unknown>) {
  const res = await admin(`/tenants/${tenant.id}/tokens`, {
    method: 'POST',
    body: JSON.stringify(spec),
  });
  const body = await envelope(res);
  expect(res.status, JSON.stringify(body)).toBe(201);
  return {
    id: tenant.id,
    token: body.data.token as string,
    tokenId: body.data.id as string,
    record: body.data,
  };
}

// Time moves by injection, never by sleeping: only Date is faked, timers run as usual.
beforeEach(() => vi.useFakeTimers({ toFake: ['Date'], now: Date.now() }));
afterEach(() => vi.useRealTimers());

describe('tenants', () => {
  it('lists tenants page by page with a cursor, without keys', async () => {
    await createTenant(platformKeys.demo, 'list-a');
    await createTenant(platformKeys.demo, 'list-b');
    const first = await envelope(await admin('/tenants?page_size=1'));
    expect(first.data.tenants).toHaveLength(1);
    expect(first.data.cursor).toEqual(expect.any(String));
    const second = await envelope(
      await admin(`/tenants?page_size=1&cursor=${encodeURIComponent(first.data.cursor)}`),
    );
    expect(second.data.tenants[0].id).not.toBe(first.data.tenants[0].id);
    expect(Object.keys(first.data.tenants[0]).sort()).toEqual([
      'created_at',
      'id',
      'key_fingerprint',
      'name',
      'plan',
      'status',
      'updated_at',
    ]);
  });

  it('renames a tenant', async () => {
    const t = await createTenant();
    const res = await admin(`/tenants/${t.id}`, {
      method: 'PATCH',
      body: JSON.stringify({ name: 'Renamed' }),
    });
    expect((await envelope(res)).data.name).toBe('Renamed');
    expect((await envelope(await admin(`/tenants/${t.id}`))).data.name).toBe('Renamed');
  });

  it('updates the platform key: the next request carries the new key', async () => {
    const t = await createTenant(platformKeys.demo);
    await asTenant(t, '/team/lists');
    const res = await admin(`/tenants/${t.id}`, {
      method: 'PATCH',
      body: JSON.stringify({ platform_key: platformKeys.other }),
    });
    const updated = await envelope(res);
    expect(res.status).toBe(200);
    expect(updated).toMatchObject({ code: 0, data: { id: t.id } });
    expect(JSON.stringify(updated)).not.toContain(platformKeys.other);
    const after = await asTenant(t, '/agent/lists');
    expect((await upstreamSaw(after.id))[0]!.headers['x-api-key']).toBe(platformKeys.other);
    // Its cached team list was the old key's: the new key does not see it.
    const teams = await asTenant(t, '/team/lists');
    expect(teams.body.data.data.length).toBeGreaterThan(0);
    expect(
      teams.body.data.data.every((team: { name: string }) => team.name.startsWith('Other:')),
    ).toBe(true);
  });

  it('disables at once (even where the tenant is remembered), enables again', async () => {
    const t = await createTenant();
    const remember = { TENANT_MEMO_TTL_MS: '60000' };
    const call = () =>
      gatewayWith(remember, '/agent/lists', { headers: { authorization: t.token } });
    expect((await call()).status).toBe(200);
    expect((await admin(`/tenants/${t.id}/disable`, { method: 'POST' })).status).toBe(200);
    const refused = await call();
    expect(refused.status).toBe(403);
    expect((await envelope(refused)).code).toBe(ERRORS.TENANT_DISABLED.code);
    expect((await admin(`/tenants/${t.id}/enable`, { method: 'POST' })).status).toBe(200);
    expect((await call()).status).toBe(200);
  });

  it('deletes a tenant: its token stops working and the tenant is gone', async () => {
    const t = await createTenant();
    expect((await admin(`/tenants/${t.id}`, { method: 'DELETE' })).status).toBe(200);
    const gone = await asTenant(t, '/agent/lists');
    expect([
      [401, ERRORS.INVALID_TOKEN.code],
      [403, ERRORS.TENANT_DISABLED.code],
    ]).toContainEqual([gone.res.status, gone.body.code]);
    await expectRefusal(await admin(`/tenants/${t.id}`), 'RESOURCE_NOT_FOUND');
    await expectRefusal(await admin(`/tenants/${t.id}/tokens`), 'RESOURCE_NOT_FOUND');
  });

  it.each([
    ['no platform_key', 'POST', '/tenants', { name: 'x' }, 'platform_key is required'],
    [
      'an unknown scope',
      'POST',
      '/tenants',
      { name: 'x', platform_key: 'sk-12345678', token: { scopes: ['teams:delete'] } },
      'Unknown scope teams:delete',
    ],
    [
      'an expiry in the past',
      'POST',
      '/tenants',
      { name: 'x', platform_key: 'sk-12345678', token: { expires_at: '2020-01-01T00:00:00Z' } },
      'expires_at must be in the future',
    ],
    [
      'a platform key that cannot go in a header',
      'POST',
      '/tenants',
      { name: 'x', platform_key: 'sk-ключ-12345678' },
      'printable ASCII',
    ],
    [
      'an origin with a path',
      'POST',
      '/tenants',
      { name: 'x', platform_key: 'sk-12345678', cors_origins: ['https://a.example/app'] },
      'without a path',
    ],
    [
      'an unknown field',
      'POST',
      '/tenants',
      { name: 'x', platform_key: 'sk-12345678', tier: 'gold' },
      'Unknown body parameter: tier',
      'UNKNOWN_PARAMETER',
    ],
    ['an empty update', 'PATCH', '/tenants/ten_0000000000000000', {}, 'give at least one of'],
    [
      'a status (it has its own endpoints)',
      'PATCH',
      '/tenants/ten_0000000000000000',
      { status: 'paused' },
      'Unknown body parameter: status',
      'UNKNOWN_PARAMETER',
    ],
    ['a bad tenant id', 'GET', '/tenants/tenant-1', undefined, 'id must be a tenant id'],
    [
      'a bad page size',
      'GET',
      '/tenants?page_size=500',
      undefined,
      'page_size must be an integer from 1 to 100',
    ],
  ])('refuses %s', async (_, method, path, body, says, kind = 'VALIDATION_FAILED') => {
    const res = await admin(path, {
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    expect((await expectRefusal(res, kind as ErrorKind)).msg).toContain(says);
  });
});

it('stores a tenant with the most and longest origins allowed', async () => {
  const origins = Array.from(
    { length: 20 },
    (_, i) => `https://${'a'.repeat(200)}-${i}.example.com`,
  );
  const res = await admin('/tenants', {
    method: 'POST',
    body: JSON.stringify({
      name: 'many origins',
      platform_key: platformKeys.demo,
      cors_origins: origins,
    }),
  });
  expect(res.status).toBe(201);
  const shown = await envelope(await admin(`/tenants/${(await envelope(res)).data.tenant_id}`));
  expect(shown.data.cors_origins).toHaveLength(20);
});

describe('tokens', () => {
  it('lists a tenant’s tokens with prefix and last four only', async () => {
    const t = await createTenant();
    const second = await issue(t, { name: 'ci', scopes: ['read-only'] });
    const listed = await envelope(await admin(`/tenants/${t.id}/tokens`));
    const text = JSON.stringify(listed);
    expect(text).not.toContain(t.token);
    expect(text).not.toContain(second.token);
    expect(listed.data.tokens).toHaveLength(2);
    const ci = listed.data.tokens.find((x: { id: string }) => x.id === second.tokenId);
    expect(ci).toMatchObject({
      name: 'ci',
      prefix: second.token.slice(0, 9),
      last4: second.token.slice(-4),
      expires_at: null,
    });
    // A preset is kept by its name, so it reaches groups added later (docs/OPERATING.md).
    expect(ci.scopes).toEqual(['read-only']);
  });

  it('refuses a token after its expiry', async () => {
    const t = await createTenant();
    const short = await issue(t, {
      name: 'short',
      expires_at: new Date(Date.now() + 1500).toISOString(),
    });
    expect((await asTenant(short, '/agent/lists')).res.status).toBe(200);
    vi.setSystemTime(Date.now() + 1600);
    const { res, body } = await asTenant(short, '/agent/lists');
    expect(res.status).toBe(401);
    expect(body.code).toBe(ERRORS.TOKEN_EXPIRED.code);
    // An expired token cannot be rotated back to life.
    const rotate = await admin(`/tenants/${t.id}/tokens/${short.tokenId}/rotate`, {
      method: 'POST',
      body: '{}',
    });
    await expectRefusal(rotate, 'CONFLICT');
  });

  it('rotates without a failed request: both work during the overlap', async () => {
    const t = await createTenant();
    const rotated = await envelope(
      await admin(`/tenants/${t.id}/tokens/${t.tokenId}/rotate`, {
        method: 'POST',
        body: JSON.stringify({ overlap_s: 600 }),
      }),
    );
    const fresh = { ...t, token: rotated.data.token as string };
    expect(rotated.data.old_token.id).toBe(t.tokenId);
    expect(Date.parse(rotated.data.old_token.expires_at) - Date.now()).toBeGreaterThan(590_000);
    for (let i = 0; i < 5; i++) {
      expect((await asTenant(t, '/agent/lists')).res.status).toBe(200);
      expect((await asTenant(fresh, '/agent/lists')).res.status).toBe(200);
    }
  });

  it("shares the token's own quota between old and new: rotating never resets it", async () => {
    const t = await createTenant();
    const capped = await issue(t, { name: 'capped', limits: { quota: { daily: 5 } } });
    for (let i = 0; i < 3; i++) {
      expect((await asTenant(capped, '/agent/lists')).res.status).toBe(200);
    }
    const rotated = await envelope(
      await admin(`/tenants/${t.id}/tokens/${capped.tokenId}/rotate`, {
        method: 'POST',
        body: JSON.stringify({ overlap_s: 600 }),
      }),
    );
    const fresh = { ...capped, token: rotated.data.token as string };
    // Two units are left, for both tokens together.
    expect((await asTenant(fresh, '/agent/lists')).res.status).toBe(200);
    expect((await asTenant(capped, '/agent/lists')).res.status).toBe(200);
    for (const token of [fresh, capped]) {
      const { res, body } = await asTenant(token, '/agent/lists');
      expect(res.status).toBe(429);
      expect(body.code).toBe(ERRORS.QUOTA_EXHAUSTED.code);
      expect(body.data.policy).toBe('token-daily');
    }
    // A second rotation (once the first one's overlap is over) stays on the same meters.
    await admin(`/tenants/${t.id}/tokens/${capped.tokenId}`, { method: 'DELETE' });
    const again = await envelope(
      await admin(`/tenants/${t.id}/tokens/${rotated.data.id}/rotate`, {
        method: 'POST',
        body: JSON.stringify({ overlap_s: 0 }),
      }),
    );
    const third = await asTenant({ ...capped, token: again.data.token }, '/agent/lists');
    await expectRefusal(third, 'QUOTA_EXHAUSTED');
    expect(third.body.data.policy).toBe('token-daily');
  });

  it('keeps the old token for 3600 s when no overlap is given', async () => {
    const t = await createTenant();
    const rotated = await envelope(
      await admin(`/tenants/${t.id}/tokens/${t.tokenId}/rotate`, { method: 'POST', body: '{}' }),
    );
    expect(
      Math.abs(Date.parse(rotated.data.old_token.expires_at) - (Date.now() + 3_600_000)),
    ).toBeLessThan(5_000);
  });

  it('ends the old token at the chosen time, even where it is remembered', async () => {
    const t = await createTenant();
    const until = new Date(Date.now() + 1200).toISOString();
    const rotated = await envelope(
      await admin(`/tenants/${t.id}/tokens/${t.tokenId}/rotate`, {
        method: 'POST',
        body: JSON.stringify({ old_valid_until: until }),
      }),
    );
    const remember = { TENANT_MEMO_TTL_MS: '60000' };
    const call = (token: string) =>
      gatewayWith(remember, '/agent/lists', { headers: { authorization: token } });
    expect((await call(t.token)).status).toBe(200);
    vi.setSystemTime(Date.now() + 1300);
    const old = await call(t.token);
    expect(old.status).toBe(401);
    expect((await envelope(old)).code).toBe(ERRORS.TOKEN_EXPIRED.code);
    expect((await call(rotated.data.token)).status).toBe(200);
  });
});

describe('scopes', () => {
  it.each(BUILT_IN_OPERATIONS.map((s) => [`${s.method} ${s.path}`, s] as const))(
    '%s needs its scope',
    async (_, spec) => {
      const needed = requiredScope(spec);
      const t = await createTenant();
      const without = await issue(t, {
        name: 'narrow',
        scopes: ALL_SCOPES.filter((s) => s !== needed && s !== 'apikeys:admin'),
      });
      const path = spec.path
        .replace(':team_id', '3f6c1e2a-5b7d-4c8e-9f01-23456789abcd')
        .replace(':agent_id', '3f6c1e2a-5b7d-4c8e-9f01-23456789abcd')
        .replace(/:[a-z_]+/, '1');
      const { res, body, id } = await asTenant(without, path, { method: spec.method });
      expect(res.status).toBe(403);
      expect(body.code).toBe(ERRORS.SCOPE_REQUIRED.code);
      expect(body.msg).toContain(needed);
      expect(body.data.scope).toBe(needed);
      expect(await upstreamSaw(id)).toEqual([]);
    },
  );

  it('the read-only preset reads but does not write or see API keys', async () => {
    const t = await createTenant();
    const partner = await issue(t, { name: 'partner', scopes: ['read-only'] });
    expect((await asTenant(partner, '/team/lists')).res.status).toBe(200);
    expect((await asTenant(partner, '/user/call/lists')).res.status).toBe(200);
    expect(
      (
        await asTenant(partner, '/session/create', {
          method: 'POST',
          json: { team_id: '3f6c1e2a-5b7d-4c8e-9f01-23456789abcd' },
        })
      ).body.data.scope,
    ).toBe('sessions:write');
    expect((await asTenant(partner, '/user/apikey/lists')).body.data.scope).toBe('apikeys:read');
  });
});

describe('redaction of platform secrets', () => {
  async function keysAs(t: TestTenant, scopes: string[]) {
    const tok = await issue(t, { name: 'keys', scopes });
    return asTenant(tok, '/user/apikey/lists?page_size=100');
  }

  it('masks api_key in apikey.list without apikeys:admin', async () => {
    const t = await createTenant();
    const { body } = await keysAs(t, ['apikeys:read']);
    const text = JSON.stringify(body);
    expect(text).not.toContain(platformKeys.demo);
    expect(body.data.data[0].api_key).toMatch(/^sk-…[0-9a-f]{4}$/);
  });

  it('shows api_key to apikeys:admin', async () => {
    const t = await createTenant();
    const { body } = await keysAs(t, ['apikeys:admin']);
    expect(JSON.stringify(body)).toContain(platformKeys.demo);
  });

  it('masks the new key of apikey.create without apikeys:admin', async () => {
    const t = await createTenant();
    const writer = await issue(t, { name: 'writer', scopes: ['apikeys:write'] });
    const { body } = await asTenant(writer, '/user/apikey/new', {
      method: 'POST',
      json: { name: 'masked' },
    });
    expect(body.code).toBe(0);
    expect(body.data.api_key).toMatch(/^sk-…[0-9a-f]{4}$/);
  });
});

describe('platform keys at rest', () => {
  it('no KV key, value or metadata holds a platform key or a token in plain text', async () => {
    const t = await createTenant(platformKeys.other, 'scan');
    const plain = [platformKeys.demo, platformKeys.other, platformKeys.demoSecond, t.token];
    let cursor: string | undefined;
    let scanned = 0;
    do {
      const page = await testEnv.TENANTS.list({ cursor });
      for (const key of page.keys) {
        const value = (await testEnv.TENANTS.get(key.name)) ?? '';
        for (const secret of plain) {
          expect(key.name).not.toContain(secret);
          expect(value).not.toContain(secret);
          expect(JSON.stringify(key.metadata ?? null)).not.toContain(secret);
        }
        scanned++;
      }
      cursor = page.list_complete ? undefined : page.cursor;
    } while (cursor);
    expect(scanned).toBeGreaterThan(3);
    const stored = JSON.parse((await testEnv.TENANTS.get(`tenant:${t.id}`))!);
    expect(stored.platform_key_sealed).toMatch(/^v1\.k2\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(stored.platform_key).toBeUndefined();
  });

  it('opens keys sealed under an older key id, and re-seals them under the current one', async () => {
    const onlyOld = { KEY_ENCRYPTION_KEY: `k1:${'A'.repeat(43)}=` };
    const res = await gatewayWith(onlyOld, '/admin/tenants', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${testEnv.ADMIN_TOKEN}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ name: 'old key', platform_key: platformKeys.demo }),
    });
    const created = (await envelope(res)).data;
    expect(
      JSON.parse((await testEnv.TENANTS.get(`tenant:${created.tenant_id}`))!).platform_key_sealed,
    ).toMatch(/^v1\.k1\./);
    // The current ring (k2 first, k1 still present) opens it.
    expect(
      (
        await asTenant(
          { id: created.tenant_id, token: created.token, tokenId: created.token_id },
          '/agent/lists',
        )
      ).res.status,
    ).toBe(200);
    const resealed = await envelope(await admin('/maintenance/reencrypt', { method: 'POST' }));
    expect(resealed.data.resealed).toBeGreaterThanOrEqual(1);
    // Its token is tagged under k1: counted, so the operator rotates it before dropping k1.
    expect(resealed.data.tokens_on_older_keys).toBeGreaterThanOrEqual(1);
    expect(
      JSON.parse((await testEnv.TENANTS.get(`tenant:${created.tenant_id}`))!).platform_key_sealed,
    ).toMatch(/^v1\.k2\./);
    const rotated = await envelope(
      await admin(`/tenants/${created.tenant_id}/tokens/${created.token_id}/rotate`, {
        method: 'POST',
        body: JSON.stringify({ overlap_s: 0 }),
      }),
    );
    expect(rotated.data.tag_kid).toBe('k2');
    const onlyNew = { KEY_ENCRYPTION_KEY: `k2:${'B'.repeat(43)}=` };
    const call = (token: string) =>
      gatewayWith(onlyNew, '/agent/lists', { headers: { authorization: token } });
    expect((await call(rotated.data.token)).status).toBe(200);
    // A token tagged under a key no longer in the ring is refused like a forged one.
    const old = await call(created.token);
    expect(old.status).toBe(401);
    expect((await envelope(old)).code).toBe(ERRORS.INVALID_TOKEN.code);
  });

  it('a missing KEY_ENCRYPTION_KEY is named, never guessed', async () => {
    const res = await gatewayWith({ KEY_ENCRYPTION_KEY: undefined }, '/agent/lists');
    expect((await expectRefusal(res, 'MISCONFIGURED')).msg).toContain('KEY_ENCRYPTION_KEY');
  });
});

describe('audit log', () => {
  it('records every operator action, newest first, paged, without secrets', async () => {
    const t = await createTenant(platformKeys.demo, 'audited');
    const extra = await issue(t, { name: 'extra', scopes: ['read-only'] });
    await admin(`/tenants/${t.id}/tokens/${extra.tokenId}/rotate`, {
      method: 'POST',
      body: JSON.stringify({ overlap_s: 60 }),
    });
    await admin(`/tenants/${t.id}/tokens/${extra.tokenId}`, { method: 'DELETE' });
    await admin(`/tenants/${t.id}/limits`, {
      method: 'PUT',
      body: JSON.stringify({ policies: [] }),
    });
    await admin(`/tenants/${t.id}`, {
      method: 'PATCH',
      body: JSON.stringify({ platform_key: platformKeys.other }),
    });
    await admin(`/tenants/${t.id}/disable`, { method: 'POST' });

    const log = await envelope(await admin(`/audit?tenant_id=${t.id}&page_size=100`));
    expect(log.data.data.map((e: { action: string }) => e.action)).toEqual([
      'tenant.disabled',
      'tenant.updated',
      'limits.set',
      'token.revoked',
      'token.rotated',
      'token.issued',
      'tenant.created',
    ]);
    expect(log.data.data[1].detail).toEqual({ fields: ['platform_key'] });
    expect(log.data.data[3].token_id).toBe(extra.tokenId);
    const text = JSON.stringify(log);
    for (const secret of [t.token, extra.token, platformKeys.demo, platformKeys.other])
      expect(text).not.toContain(secret);

    const page2 = await envelope(await admin(`/audit?tenant_id=${t.id}&page_size=3&page_num=2`));
    expect(page2.data).toMatchObject({ page_num: 2, page_size: 3, total: 7, total_page: 3 });
    expect(page2.data.data.map((e: { action: string }) => e.action)).toEqual([
      'token.revoked',
      'token.rotated',
      'token.issued',
    ]);
  });
});
