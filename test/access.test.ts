/**
 * Operator identity through Cloudflare Access: the gateway verifies JWTs from
 * the local Access stand-in (scripts/local-access.ts, a real HTTP server on
 * loopback publishing its keys) with the production code path.
 */
import { describe, expect, inject, it } from 'vitest';
import {
  ADMIN_TOKEN,
  envelope,
  expectRefusal,
  gatewayWith,
  platformKeys,
  UPSTREAM,
} from './helpers';

const access = inject('localAccess');
const ACCESS = {
  ACCESS_TEAM_DOMAIN: access.url,
  ACCESS_AUD: access.aud,
  ACCESS_ROLES: access.roles,
  ACCESS_LOCAL_ISSUER: 'allow',
};
const ADMIN_EMAIL = 'admin@operators.local';
const VIEWER_EMAIL = 'viewer@operators.local';

async function mint(req: Record<string, unknown> = {}): Promise<string> {
  const res = await fetch(`${access.url}/__access/mint`, {
    method: 'POST',
    body: JSON.stringify(req),
  });
  return res.text();
}

async function certsFetches(): Promise<number> {
  return ((await (await fetch(`${access.url}/__access/stats`)).json()) as { certs_fetches: number })
    .certs_fetches;
}

function asOperator(jwt: string, path: string, init: RequestInit = {}, settings = ACCESS) {
  const headers = new Headers(init.headers);
  headers.set('cf-access-jwt-assertion', jwt);
  if (init.body) headers.set('content-type', 'application/json');
  return gatewayWith(settings, `/admin${path}`, { ...init, headers });
}

const newTenant = (name: string) => ({
  method: 'POST',
  body: JSON.stringify({ name, platform_key: platformKeys.demo }),
});

/** An unsigned token: `alg: none` and an empty signature. */
function algNone(payload: Record<string, unknown>): string {
  const part = (o: unknown) =>
    btoa(JSON.stringify(o)).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(payload)}.`;
}

describe('Cloudflare Access operators', () => {
  it('an admin from Access is told who it is and can change things; the audit log names it', async () => {
    const jwt = await mint({ email: ADMIN_EMAIL });
    const me = await envelope(await asOperator(jwt, '/whoami'));
    expect(me.data).toEqual({
      actor: ADMIN_EMAIL,
      role: 'admin',
      via: 'access',
      // The tests' settings allow local webhook targets (vitest.config.ts); the console says so.
      settings: { webhook_local_targets: true },
    });

    const created = await asOperator(jwt, '/tenants', {
      ...newTenant('made by access'),
      headers: { 'cf-connecting-ip': '203.0.113.7' },
    });
    expect(created.status).toBe(201);
    const tenantId = (await envelope(created)).data.tenant_id as string;

    const log = await envelope(await asOperator(jwt, `/audit?tenant_id=${tenantId}`));
    expect(log.data.data[0]).toMatchObject({
      action: 'tenant.created',
      actor: ADMIN_EMAIL,
      ip: '203.0.113.7',
    });
    const byActor = await envelope(
      await asOperator(jwt, `/audit?actor=${encodeURIComponent(ADMIN_EMAIL)}&action=tenant.`),
    );
    expect(byActor.data.data.length).toBeGreaterThan(0);
    for (const e of byActor.data.data) {
      expect(e.actor).toBe(ADMIN_EMAIL);
      expect(e.action.startsWith('tenant.')).toBe(true);
    }
  });

  it('ADMIN_TOKEN still works alongside Access, as admin, and is audited as admin-token', async () => {
    const res = await gatewayWith(ACCESS, '/admin/tenants', {
      ...newTenant('made by token'),
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    });
    expect(res.status).toBe(201);
    const tenantId = (await envelope(res)).data.tenant_id as string;
    const log = await envelope(
      await gatewayWith(ACCESS, `/admin/audit?tenant_id=${tenantId}`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      }),
    );
    expect(log.data.data[0]).toMatchObject({ action: 'tenant.created', actor: 'admin-token' });
  });

  it('a viewer reads everything and changes nothing (403, OPERATOR_READ_ONLY)', async () => {
    const jwt = await mint({ email: VIEWER_EMAIL });
    expect((await envelope(await asOperator(jwt, '/whoami'))).data.role).toBe('viewer');
    expect((await asOperator(jwt, '/tenants')).status).toBe(200);
    expect((await asOperator(jwt, '/audit')).status).toBe(200);

    const before = (await envelope(await asOperator(jwt, '/audit'))).data.total as number;
    await expectRefusal(
      await asOperator(jwt, '/tenants', newTenant('viewer try')),
      'OPERATOR_READ_ONLY',
    );
    await expectRefusal(
      await asOperator(jwt, '/tenants/ten_0000000000000000', { method: 'DELETE' }),
      'OPERATOR_READ_ONLY',
    );
    // Nothing was done, so nothing was audited.
    expect((await envelope(await asOperator(jwt, '/audit'))).data.total).toBe(before);
  });

  it("shows a viewer a webhook URL's origin only (it may carry the receiver's credentials)", async () => {
    const admin = await mint({ email: ADMIN_EMAIL });
    const created = await envelope(await asOperator(admin, '/tenants', newTenant('hooked')));
    const id = created.data.tenant_id as string;
    const url = 'https://hooks.example.com/services/T000/B000/s3cretPath?token=abc';
    const set = await asOperator(admin, `/tenants/${id}/alerts`, {
      method: 'PUT',
      body: JSON.stringify({ url, thresholds: [80, 100] }),
    });
    expect(set.status).toBe(200);
    expect((await envelope(await asOperator(admin, `/tenants/${id}/alerts`))).data.url).toBe(url);
    const viewer = await mint({ email: VIEWER_EMAIL });
    const seen = await envelope(await asOperator(viewer, `/tenants/${id}/alerts`));
    expect(seen.data).toEqual({
      url: 'https://hooks.example.com/…',
      thresholds: [80, 100],
      server_error_percent: 10,
    });
  });

  it('roles come from ACCESS_ROLES: by group, by domain, and none at all', async () => {
    const roles = JSON.stringify({
      admin: ['group:gateway-admins'],
      viewer: ['*@partner.example'],
    });
    const settings = { ...ACCESS, ACCESS_ROLES: roles };
    const byGroup = await mint({ email: 'someone@corp.example', groups: ['gateway-admins'] });
    expect((await envelope(await asOperator(byGroup, '/whoami', {}, settings))).data.role).toBe(
      'admin',
    );
    const byDomain = await mint({ email: 'Ann@Partner.example' });
    expect(
      (await envelope(await asOperator(byDomain, '/whoami', {}, settings))).data,
    ).toMatchObject({
      role: 'viewer',
      actor: 'ann@partner.example',
    });
    const nobody = await mint({ email: 'stranger@elsewhere.example' });
    await expectRefusal(await asOperator(nobody, '/whoami', {}, settings), 'OPERATOR_NO_ROLE');
  });

  it('refuses a wrong aud, a wrong iss, an expired token, a not-yet-valid one, another key and alg none', async () => {
    const now = Math.floor(Date.now() / 1000);
    const bad = {
      'wrong aud': await mint({ aud: 'some-other-application' }),
      'wrong iss': await mint({ iss: 'https://other-team.cloudflareaccess.com' }),
      expired: await mint({ exp_in_s: -30 }),
      'not yet valid': await mint({ nbf_in_s: 300 }),
      'other key': await mint({ key: 'other' }),
      'alg none': algNone({
        aud: [access.aud],
        iss: access.url,
        email: ADMIN_EMAIL,
        exp: now + 600,
      }),
      garbage: 'not.a.jwt',
    };
    for (const [what, jwt] of Object.entries(bad)) {
      const res = await asOperator(jwt, '/whoami');
      expect(res.status, what).toBe(401);
      expect((await envelope(res)).code, what).toBe(40105);
    }
    await expectRefusal(await gatewayWith(ACCESS, '/admin/whoami'), 'ACCESS_TOKEN_INVALID');
  });

  it('an unknown kid fetches the keys again at most once a minute', async () => {
    await asOperator(await mint(), '/whoami'); // keys cached
    const before = await certsFetches();
    for (let i = 0; i < 5; i++) {
      await expectRefusal(
        await asOperator(await mint({ key: 'other' }), '/whoami'),
        'ACCESS_TOKEN_INVALID',
      );
    }
    expect(await certsFetches()).toBe(before);
  });

  it('with the cookie, a change needs the gateway’s own Origin (no cross-site changes)', async () => {
    const cookie = `CF_Authorization=${await mint({ email: ADMIN_EMAIL })}`;
    const headers = { cookie, 'content-type': 'application/json' };
    expect((await gatewayWith(ACCESS, '/admin/whoami', { headers: { cookie } })).status).toBe(200);
    await expectRefusal(
      await gatewayWith(ACCESS, '/admin/tenants', {
        ...newTenant('cross-site'),
        headers: { ...headers, origin: 'https://evil.example' },
      }),
      'OPERATOR_NO_ROLE',
    );
    const same = await gatewayWith(ACCESS, '/admin/tenants', {
      ...newTenant('same-site'),
      headers: { ...headers, origin: 'https://gateway.test' },
    });
    expect(same.status).toBe(201);
  });

  it('behind Access (the header on every request) a change from another site is refused too', async () => {
    const jwt = await mint({ email: ADMIN_EMAIL });
    const headers = { 'cf-access-jwt-assertion': jwt, 'content-type': 'application/json' };
    const signs: Record<string, string>[] = [
      { origin: 'https://evil.example' },
      { 'sec-fetch-site': 'cross-site' },
    ];
    for (const from of signs) {
      await expectRefusal(
        await gatewayWith(ACCESS, '/admin/tenants', {
          ...newTenant('cross-site behind access'),
          headers: { ...headers, ...from },
        }),
        'OPERATOR_NO_ROLE',
      );
    }
    // The console's own page, and automation that sends no browser headers, may change things.
    const own = await gatewayWith(ACCESS, '/admin/tenants', {
      ...newTenant('own page'),
      headers: { ...headers, origin: 'https://gateway.test' },
    });
    expect(own.status).toBe(201);
    const automation = await gatewayWith(ACCESS, '/admin/tenants', {
      ...newTenant('service token'),
      headers,
    });
    expect(automation.status).toBe(201);
  });

  it('answers 503 when the team publishes no keys, without a fetch per request', async () => {
    // The platform emulator has no /cdn-cgi/access/certs: a 404, as from a team domain
    // that is down or mistyped.
    const settings = { ...ACCESS, ACCESS_TEAM_DOMAIN: UPSTREAM };
    const jwt = await mint();
    for (let i = 0; i < 2; i++) {
      await expectRefusal(
        await asOperator(jwt, '/whoami', {}, settings),
        'ACCESS_KEYS_UNAVAILABLE',
      );
    }
    // ADMIN_TOKEN still works meanwhile.
    const res = await gatewayWith(settings, '/admin/whoami', {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(res.status).toBe(200);
  });

  it('a loopback http team domain needs ACCESS_LOCAL_ISSUER=allow; ACCESS_AUD is required', async () => {
    const jwt = await mint();
    await expectRefusal(
      await asOperator(jwt, '/whoami', {}, { ...ACCESS, ACCESS_LOCAL_ISSUER: 'refuse' }),
      'MISCONFIGURED',
    );
    await expectRefusal(
      await asOperator(jwt, '/whoami', {}, { ...ACCESS, ACCESS_AUD: '' }),
      'MISCONFIGURED',
    );
    await expectRefusal(
      await asOperator(
        jwt,
        '/whoami',
        {},
        { ...ACCESS, ACCESS_TEAM_DOMAIN: 'http://team.example' },
      ),
      'MISCONFIGURED',
    );
  });
});
