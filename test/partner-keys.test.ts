/**
 * A partner's own keys, as the portal makes them (docs/OAUTH.md, "Partners' own keys"):
 * named, scoped within what the operator lets the tenant grant, limited within the
 * tenant's limits, up to the operator's count, each with its last use; the partner
 * revokes its own keys only; the operator sees who made each, and revokes them too.
 */
import { describe, expect, it } from 'vitest';
import {
  admin,
  asTenant,
  createTenant,
  envelope,
  expectRefusal,
  gateway,
  platformKeys,
  type TestTenant,
  until,
} from './helpers';
import { grantTokens, partnerToken, registerClient } from './oauth-helpers';

function asPartner(token: string, path: string, init: RequestInit & { json?: unknown } = {}) {
  return asTenant({ id: '', token, tokenId: '' }, path, init);
}

async function makeKey(token: string, body: Record<string, unknown>) {
  return asPartner(token, '/partner/keys', {
    method: 'POST',
    json: { name: 'backend', scopes: ['full'], ...body },
  });
}

async function tenantWithPartner(name: string): Promise<{ tenant: TestTenant; partner: string }> {
  const tenant = await createTenant(platformKeys.demo, name);
  return { tenant, partner: await partnerToken(tenant) };
}

describe("a partner's own keys", () => {
  it('are made once, work, show their last use, and name who made them to the operator', async () => {
    const { tenant, partner } = await tenantWithPartner('partner keys');
    const made = await makeKey(partner, { name: 'nightly sync', expires_in_days: 30 });
    expect(made.res.status, JSON.stringify(made.body)).toBe(201);
    expect(made.res.headers.get('cache-control')).toBe('private, no-store');
    const key = made.body.data;
    expect(key).toMatchObject({ name: 'nightly sync', scopes: ['full'], revoked_at: null });
    expect(key.token).toMatch(/^apgw_/);
    expect(key.made_by).toMatch(/^token:tok_/);
    expect(Date.parse(key.expires_at) - Date.now()).toBeGreaterThan(29 * 86_400_000);

    expect((await asTenant({ ...tenant, token: key.token }, '/team/lists')).res.status).toBe(200);
    // The operator's list polls (the partner's own calls have a small self-service meter).
    await until(async () => {
      const all = await envelope(await admin(`/tenants/${tenant.id}/tokens`));
      return all.data.tokens.some(
        (t: { id: string; last_used_at: string | null }) => t.id === key.id && t.last_used_at,
      );
    }, 'the key shown as used');
    const listed = await asPartner(partner, '/partner/keys');
    expect(listed.body.data).toMatchObject({ max_keys: 10, grantable_scopes: ['full'] });
    expect(listed.body.data.keys[0].last_used_at).toEqual(expect.any(String));
    expect(JSON.stringify(listed.body)).not.toContain(key.token);

    const tokens = await envelope(await admin(`/tenants/${tenant.id}/tokens`));
    const seen = tokens.data.tokens.find((t: { id: string }) => t.id === key.id);
    expect(seen.made_by).toBe(key.made_by);
    await until(async () => {
      const audit = await envelope(
        await admin(`/audit?tenant_id=${tenant.id}&action=partner_key.created`),
      );
      return audit.data.data.length === 1;
    }, 'the key audited');
    const audit = await envelope(
      await admin(`/audit?tenant_id=${tenant.id}&action=partner_key.created`),
    );
    expect(audit.data.data[0]).toMatchObject({
      actor: key.made_by,
      token_id: key.id,
      detail: { name: 'nightly sync', made_by: key.made_by },
    });
  });

  it('are at most as many at once as the operator allows', async () => {
    const { tenant, partner } = await tenantWithPartner('key count');
    await admin(`/tenants/${tenant.id}/partner-access`, {
      method: 'PUT',
      body: JSON.stringify({ max_keys: 2 }),
    });
    const first = await makeKey(partner, { name: 'one' });
    expect((await makeKey(partner, { name: 'two' })).res.status).toBe(201);
    const third = await makeKey(partner, { name: 'three' });
    const body = await expectRefusal(third, 'CONFLICT');
    expect(body.data.max_keys).toBe(2);
    // Revoking one frees its place.
    const revoked = await asPartner(partner, `/partner/keys/${first.body.data.id}`, {
      method: 'DELETE',
    });
    expect(revoked.res.status).toBe(200);
    expect((await makeKey(partner, { name: 'three' })).res.status).toBe(201);
  });

  it('hold only what the tenant may grant, and limits within its own', async () => {
    const { tenant, partner } = await tenantWithPartner('key bounds');
    await expectRefusal(await makeKey(partner, { scopes: ['apikeys:admin'] }), 'SCOPE_REQUIRED');
    await expectRefusal(await makeKey(partner, { scopes: ['token:rotate'] }), 'SCOPE_REQUIRED');
    await expectRefusal(await makeKey(partner, { scopes: ['partner:manage'] }), 'SCOPE_REQUIRED');
    await admin(`/tenants/${tenant.id}/partner-access`, {
      method: 'PUT',
      body: JSON.stringify({ grantable_scopes: ['read-only'] }),
    });
    await expectRefusal(await makeKey(partner, { scopes: ['full'] }), 'SCOPE_REQUIRED');
    expect((await makeKey(partner, { scopes: ['teams:read'] })).res.status).toBe(201);

    await admin(`/tenants/${tenant.id}/limits`, {
      method: 'PUT',
      body: JSON.stringify({
        policies: [{ name: 'sustained', limit: 100, window_s: 60 }],
        quota: { daily: 1000 },
      }),
    });
    const tooFast = await makeKey(partner, {
      scopes: ['teams:read'],
      limits: { policies: [{ name: 'per-minute', limit: 500, window_s: 60 }] },
    });
    expect((await expectRefusal(tooFast, 'VALIDATION_FAILED')).msg).toMatch(/at most 100/);
    const tooMuch = await makeKey(partner, {
      scopes: ['teams:read'],
      limits: { quota: { daily: 5000 } },
    });
    await expectRefusal(tooMuch, 'VALIDATION_FAILED');
    const within = await makeKey(partner, {
      scopes: ['teams:read'],
      limits: {
        policies: [{ name: 'per-minute', limit: 50, window_s: 60 }],
        quota: { daily: 500 },
      },
    });
    expect(within.res.status).toBe(201);
    expect(within.body.data.limits.quota.daily).toBe(500);
  });

  it("revoke only the partner's own keys: an operator's token, another tenant's key are no key of theirs", async () => {
    const { tenant, partner } = await tenantWithPartner('key revoke');
    const key = (await makeKey(partner, {})).body.data;
    await expectRefusal(
      await asPartner(partner, `/partner/keys/${tenant.tokenId}`, { method: 'DELETE' }),
      'RESOURCE_NOT_FOUND',
    );
    const other = await tenantWithPartner('someone else');
    await expectRefusal(
      await asPartner(other.partner, `/partner/keys/${key.id}`, { method: 'DELETE' }),
      'RESOURCE_NOT_FOUND',
    );
    expect((await asTenant({ ...tenant, token: key.token }, '/team/lists')).res.status).toBe(200);
    await asPartner(partner, `/partner/keys/${key.id}`, { method: 'DELETE' });
    await expectRefusal(
      await asTenant({ ...tenant, token: key.token }, '/team/lists'),
      'TOKEN_REVOKED',
    );
    // The operator still sees it (revoked) and who made it; and operator tokens are untouched.
    expect((await asTenant(tenant, '/team/lists')).res.status).toBe(200);
  });

  it('are revoked by the operator like any token', async () => {
    const { tenant, partner } = await tenantWithPartner('operator revokes');
    const key = (await makeKey(partner, {})).body.data;
    const res = await admin(`/tenants/${tenant.id}/tokens/${key.id}`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    await expectRefusal(
      await asTenant({ ...tenant, token: key.token }, '/team/lists'),
      'TOKEN_REVOKED',
    );
    const listed = await asPartner(partner, '/partner/keys');
    expect(listed.body.data.keys[0].revoked_at).not.toBeNull();
  });

  it('need partner:manage: an ordinary full token, a usage-only link or an app cannot manage them', async () => {
    const { tenant, partner } = await tenantWithPartner('key rights');
    await expectRefusal(await asTenant(tenant, '/partner/keys'), 'SCOPE_REQUIRED');
    const app = await grantTokens(tenant, await registerClient());
    await expectRefusal(await asPartner(app.access_token, '/partner/keys'), 'SCOPE_REQUIRED');
    await expectRefusal(await asPartner(app.access_token, '/partner/apps'), 'SCOPE_REQUIRED');
    expect((await asPartner(partner, '/partner/apps')).res.status).toBe(200);
    // The grant is listed for the partner; another tenant's partner cannot end it.
    const apps = (await asPartner(partner, '/partner/apps')).body.data.apps;
    const other = await tenantWithPartner('stranger');
    await expectRefusal(
      await asPartner(other.partner, `/partner/apps/${apps[0].id}`, { method: 'DELETE' }),
      'RESOURCE_NOT_FOUND',
    );
    expect(
      (await gateway('/team/lists', { headers: { authorization: `Bearer ${app.access_token}` } }))
        .status,
    ).toBe(200);
  });
});
