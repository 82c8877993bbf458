/**
 * What the console needs of the operator API: tenant search with paging, the
 * platform key's short fingerprint in every tenant row (never the key), and a
 * signed test alert to the tenant's webhook.
 */
import { describe, expect, it } from 'vitest';
import { hmacSha256Hex, sha256Hex } from '../src/hash';
import {
  admin,
  asTenant,
  createTenant,
  envelope,
  expectRefusal,
  platformKeys,
  UPSTREAM,
} from './helpers';

interface Row {
  id: string;
  name: string;
  key_fingerprint: string | null;
}

describe('tenant search', () => {
  it('finds tenants by part of the name or the id, any case, a page at a time', async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    const made = [];
    for (let i = 0; i < 5; i++)
      made.push(await createTenant(platformKeys.demo, `Search ${tag} ${i}`));
    await createTenant(platformKeys.demo, 'someone else');

    const seen: Row[] = [];
    let cursor: string | null = null;
    let calls = 0;
    do {
      const query: string = `q=${encodeURIComponent(`SEARCH ${tag.toUpperCase()}`)}&page_size=2${
        cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''
      }`;
      const page = await envelope(await admin(`/tenants?${query}`));
      expect(page.code).toBe(0);
      expect(page.data.tenants.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.tenants);
      cursor = page.data.cursor;
      calls++;
    } while (cursor && calls < 10);
    expect(seen.map((t) => t.id).sort()).toEqual(made.map((t) => t.id).sort());

    const byId = await envelope(await admin(`/tenants?q=${made[2]?.id}`));
    expect(byId.data.tenants.map((t: Row) => t.id)).toEqual([made[2]?.id]);
    expect(byId.data.cursor).toBeNull();
  });

  it('refuses an empty q and a cursor that no search made', async () => {
    await expectRefusal(await admin('/tenants?q=%20'), 'VALIDATION_FAILED');
    const listed = await envelope(await admin('/tenants?page_size=1'));
    const body = await expectRefusal(
      await admin(`/tenants?q=x&cursor=${encodeURIComponent(listed.data.cursor ?? 'nope')}`),
      'VALIDATION_FAILED',
    );
    expect(body.data.errors[0].field).toBe('cursor');
  });

  it('shows the first 16 hex digits of the key fingerprint, never the key', async () => {
    const t = await createTenant(platformKeys.demo, `fp ${crypto.randomUUID()}`);
    const expected = (await sha256Hex(platformKeys.demo)).slice(0, 16);
    const one = await envelope(await admin(`/tenants/${t.id}`));
    expect(one.data.key_fingerprint).toBe(expected);
    const found = await envelope(await admin(`/tenants?q=${t.id}`));
    expect(found.data.tenants[0].key_fingerprint).toBe(expected);
    for (const answer of [one, found]) {
      expect(JSON.stringify(answer)).not.toContain(platformKeys.demo);
      expect(JSON.stringify(answer)).not.toContain(await sha256Hex(platformKeys.demo));
    }
  });
});

describe('test alert', () => {
  it('sends one signed test delivery to the webhook and audits it', async () => {
    const t = await createTenant();
    const name = `alerts-${crypto.randomUUID()}`;
    const set = await envelope(
      await admin(`/tenants/${t.id}/alerts`, {
        method: 'PUT',
        body: JSON.stringify({ url: `${UPSTREAM}/__emulator/webhooks/${name}` }),
      }),
    );
    const res = await admin(`/tenants/${t.id}/alerts/test`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect((await envelope(res)).data).toMatchObject({
      delivered: true,
      status: 200,
      failure: null,
    });
    const got: { headers: Record<string, string>; body: string }[] = await (
      await fetch(`${UPSTREAM}/__emulator/webhooks/${name}`)
    ).json();
    expect(got).toHaveLength(1);
    expect(JSON.parse(got[0]?.body ?? '{}')).toMatchObject({
      tenant_id: t.id,
      test: true,
      policy: 'test',
    });
    expect(got[0]?.headers['x-gateway-delivery']).toBe('test');
    expect(got[0]?.headers['x-gateway-signature']).toBe(
      `sha256=${await hmacSha256Hex(set.data.secret, got[0]?.body ?? '')}`,
    );
    const audit = await envelope(await admin(`/audit?tenant_id=${t.id}&action=alerts.tested`));
    expect(audit.data.data[0].detail).toEqual({ status: 200, delivered: true, failure: null });
  });

  it('says so when the receiver fails, and 404 when no webhook is set', async () => {
    const t = await createTenant();
    const name = `alerts-${crypto.randomUUID()}`;
    await fetch(`${UPSTREAM}/__emulator/webhooks/${name}/fail`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ times: 1, status: 503 }),
    });
    await admin(`/tenants/${t.id}/alerts`, {
      method: 'PUT',
      body: JSON.stringify({ url: `${UPSTREAM}/__emulator/webhooks/${name}` }),
    });
    const failed = await envelope(await admin(`/tenants/${t.id}/alerts/test`, { method: 'POST' }));
    expect(failed.data.delivered).toBe(false);
    expect(failed.data.status).toBe(503);

    const bare = await createTenant();
    await expectRefusal(
      await admin(`/tenants/${bare.id}/alerts/test`, { method: 'POST' }),
      'RESOURCE_NOT_FOUND',
    );
  });
});

describe("a token's own meters in the usage", () => {
  it('adds what remains of the token’s own limits, shared with its successor after rotation', async () => {
    const t = await createTenant();
    await admin(`/tenants/${t.id}/limits`, {
      method: 'PUT',
      body: JSON.stringify({ policies: [], quota: {}, limiter: 'exact' }),
    });
    const issued = await envelope(
      await admin(`/tenants/${t.id}/tokens`, {
        method: 'POST',
        body: JSON.stringify({
          name: 'metered',
          limits: { policies: [{ name: 'pm', limit: 10, window_s: 60 }], quota: { daily: 100 } },
        }),
      }),
    );
    const token = { ...t, token: issued.data.token, tokenId: issued.data.id };
    for (let i = 0; i < 3; i++) expect((await asTenant(token, '/team/lists')).res.status).toBe(200);

    const meters = async (tokenId?: string) => {
      const q = tokenId ? `?token_id=${tokenId}` : '';
      const usage = await envelope(await admin(`/tenants/${t.id}/usage${q}`));
      expect(usage.code).toBe(0);
      return Object.fromEntries(
        (usage.data.meters as { name: string; used: number; remaining: number }[]).map((m) => [
          m.name,
          [m.used, m.remaining],
        ]),
      );
    };
    expect(await meters(token.tokenId)).toMatchObject({
      'pm-token': [3, 7],
      'token-daily': [3, 97],
    });
    const tenantOnly = await meters();
    expect(Object.keys(tenantOnly).filter((n) => n.includes('token'))).toEqual([]);
    // A token without limits of its own adds nothing.
    expect(Object.keys(await meters(t.tokenId)).sort()).toEqual(Object.keys(tenantOnly).sort());

    const rotated = await envelope(
      await admin(`/tenants/${t.id}/tokens/${token.tokenId}/rotate`, {
        method: 'POST',
        body: JSON.stringify({ overlap_s: 60 }),
      }),
    );
    expect(await meters(rotated.data.id)).toMatchObject({
      'pm-token': [3, 7],
      'token-daily': [3, 97],
    });
    await expectRefusal(await admin(`/tenants/${t.id}/usage?token_id=nope`), 'VALIDATION_FAILED');
  });
});
