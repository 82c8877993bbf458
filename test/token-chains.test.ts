/**
 * Rotation chains (docs/OPERATING.md, "Rotation"): a token has at most one
 * working successor, a family rotates one step at a time, every token records
 * its family and ancestor (and the rotated one who rotated it, when), a
 * revocation takes the successors too only when asked, and tokens stored
 * before the guard decided them are taken in with what is known of them.
 */
import { describe, expect, it } from 'vitest';
import { hashToken } from '../src/tenants/token';
import type { TokenRecord } from '../src/types/tenants';
import {
  admin,
  createTenant,
  envelope,
  expectRefusal,
  gateway,
  guardFromBeforeTokenRows,
  type TestTenant,
  testEnv,
} from './helpers';

async function rotate(t: TestTenant, tokenId: string, overlap_s = 600) {
  const res = await admin(`/tenants/${t.id}/tokens/${tokenId}/rotate`, {
    method: 'POST',
    body: JSON.stringify({ overlap_s }),
  });
  return { res, body: await envelope(res) };
}

async function tokensOf(t: TestTenant): Promise<Record<string, any>[]> {
  return (await envelope(await admin(`/tenants/${t.id}/tokens`))).data.tokens;
}

const works = async (token: string) => {
  const res = await gateway('/token', { headers: { authorization: `Bearer ${token}` } });
  await res.body?.cancel();
  return res.status === 200;
};

describe('rotation chains', () => {
  it('a token has one working successor: a second rotation answers 409 naming it', async () => {
    const t = await createTenant();
    const first = await rotate(t, t.tokenId);
    expect(first.res.status).toBe(201);
    const second = await rotate(t, t.tokenId);
    const refused = await expectRefusal(second, 'ROTATION_IN_PROGRESS');
    expect(refused.data.successor_id).toBe(first.body.data.id);
    expect(refused.msg).toContain(first.body.data.id);
    // Nothing was made: the tenant still has the two tokens.
    expect((await tokensOf(t)).map((r) => r.id)).toEqual([t.tokenId, first.body.data.id]);
  });

  it("a successor does not rotate while its ancestor's overlap runs; it may once that ends", async () => {
    const t = await createTenant();
    const b = (await rotate(t, t.tokenId)).body.data;
    const early = await expectRefusal(await rotate(t, b.id), 'ROTATION_IN_PROGRESS');
    expect(early.data).toMatchObject({
      ancestor_id: t.tokenId,
      ancestor_valid_until: b.old_token.expires_at,
    });
    // Ending the overlap early (revoking the ancestor) lets the family move on.
    await admin(`/tenants/${t.id}/tokens/${t.tokenId}`, { method: 'DELETE' });
    const c = await rotate(t, b.id);
    expect(c.res.status).toBe(201);
    expect(await works(c.body.data.token)).toBe(true);
  });

  it('a revoked successor leaves its ancestor free to rotate again', async () => {
    const t = await createTenant();
    const b = (await rotate(t, t.tokenId)).body.data;
    await admin(`/tenants/${t.id}/tokens/${b.id}`, { method: 'DELETE' });
    const again = await rotate(t, t.tokenId);
    expect(again.res.status).toBe(201);
  });

  it('records the family, the ancestor, and who rotated each token and when', async () => {
    const t = await createTenant(undefined, 'chain', ['read-only', 'token:rotate']);
    const b = (await rotate(t, t.tokenId, 0)).body.data;
    // The successor rotates itself once its ancestor has ended (overlap 0).
    const selfRotated = await gateway('/token/rotate', {
      method: 'POST',
      headers: { authorization: `Bearer ${b.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ overlap_s: 60 }),
    });
    const c = (await envelope(selfRotated)).data;
    expect(selfRotated.status).toBe(201);

    const rows = await tokensOf(t);
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(t.tokenId)).toMatchObject({
      family_id: t.tokenId,
      ancestor_id: null,
      successor_id: b.id,
      rotated_by: 'admin-token',
    });
    expect(byId.get(b.id)).toMatchObject({
      family_id: t.tokenId,
      ancestor_id: t.tokenId,
      successor_id: c.id,
      rotated_by: `token:${b.id}`,
    });
    expect(byId.get(c.id)).toMatchObject({
      family_id: t.tokenId,
      ancestor_id: b.id,
      successor_id: null,
      rotated_at: null,
      rotated_by: null,
    });
    const rotatedAt = Date.parse(byId.get(b.id)?.rotated_at);
    expect(Math.abs(rotatedAt - Date.now())).toBeLessThan(60_000);
    // Nothing secret in the listing.
    expect(JSON.stringify(rows)).not.toContain(b.token);
    expect(JSON.stringify(rows)).not.toContain(await hashToken(b.token));

    // The audit log names the self-rotation's actor, newest first.
    const log = await envelope(await admin(`/audit?tenant_id=${t.id}&action=token.rotated`));
    expect(log.data.data.map((e: any) => [e.token_id, e.actor, e.detail.by ?? null])).toEqual([
      [b.id, `token:${b.id}`, 'self'],
      [t.tokenId, 'admin-token', null],
    ]);
  });

  it('revokes a token alone by default, or with every successor when asked', async () => {
    const t = await createTenant();
    const alone = (await rotate(t, t.tokenId)).body.data;
    const res = await admin(`/tenants/${t.id}/tokens/${t.tokenId}`, { method: 'DELETE' });
    expect((await envelope(res)).data).toEqual({
      token_id: t.tokenId,
      revoked: true,
      successors_revoked: [],
    });
    expect(await works(t.token)).toBe(false);
    expect(await works(alone.token)).toBe(true);

    const u = await createTenant();
    const b = (await rotate(u, u.tokenId, 0)).body.data;
    const c = (await rotate(u, b.id)).body.data;
    const all = await admin(`/tenants/${u.id}/tokens/${u.tokenId}?with_successors=true`, {
      method: 'DELETE',
    });
    expect((await envelope(all)).data.successors_revoked).toEqual([b.id, c.id]);
    for (const token of [b.token, c.token]) expect(await works(token)).toBe(false);
    // Revoked, they stay listed as such, as one family, the rotations named.
    const listed = await tokensOf(u);
    expect(listed.map((r) => [r.id, r.family_id, r.ancestor_id, r.successor_id])).toEqual([
      [u.tokenId, u.tokenId, null, b.id],
      [b.id, u.tokenId, u.tokenId, c.id],
      [c.id, u.tokenId, b.id, null],
    ]);
    for (const row of listed) expect(row.revoked_at).toEqual(expect.any(String));
    const log = await envelope(await admin(`/audit?tenant_id=${u.id}&action=token.revoked`));
    expect(log.data.data.map((e: any) => [e.token_id, e.detail])).toEqual([
      [c.id, { with_ancestor: u.tokenId }],
      [b.id, { with_ancestor: u.tokenId }],
      [u.tokenId, { with_successors: true }],
    ]);

    const bad = await admin(`/tenants/${u.id}/tokens/${u.tokenId}?with_successors=yes`, {
      method: 'DELETE',
    });
    await expectRefusal(bad, 'VALIDATION_FAILED');
  });

  it('says when each token was last used, to the hour, from the usage history', async () => {
    const t = await createTenant();
    const unused = await envelope(
      await admin(`/tenants/${t.id}/tokens`, {
        method: 'POST',
        body: JSON.stringify({ name: 'idle' }),
      }),
    );
    // Exact mode: each request's guard call carries the usage gathered before it.
    await admin(`/tenants/${t.id}/limits`, {
      method: 'PUT',
      body: JSON.stringify({ policies: [], quota: {}, limiter: 'exact' }),
    });
    for (let i = 0; i < 2; i++) {
      const res = await gateway('/agent/lists', {
        headers: { authorization: `Bearer ${t.token}` },
      });
      expect(res.status).toBe(200);
    }
    const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000).toISOString();
    const byId = new Map((await tokensOf(t)).map((r) => [r.id, r]));
    expect(byId.get(t.tokenId)?.last_used_at).toBe(hour);
    expect(byId.get(unused.data.id)?.last_used_at).toBeNull();
  });

  it('takes in tokens stored before it decided them: families from shared meters, no ancestors', async () => {
    const t = await createTenant();
    const b = (await rotate(t, t.tokenId)).body.data;
    await guardFromBeforeTokenRows(t.id);
    const rows = await tokensOf(t);
    expect(rows.map((r) => [r.id, r.family_id, r.ancestor_id])).toEqual(
      expect.arrayContaining([
        [t.tokenId, t.tokenId, null],
        // Its meters are its line's: that is the family it is taken into.
        [b.id, t.tokenId, null],
      ]),
    );
    // The rules hold from then on: the successor is known only as a family member.
    expect((await rotate(t, b.id)).res.status).toBe(201);
  });

  it('heals a token the old race brought back: revoked in the guard, live again in KV', async () => {
    const t = await createTenant();
    const key = `token:${await hashToken(t.token)}`;
    const live = await testEnv.TENANTS.get<TokenRecord>(key, 'json');
    await admin(`/tenants/${t.id}/tokens/${t.tokenId}`, { method: 'DELETE' });
    // What the blind write-back of a rotation left in KV before this version.
    await testEnv.TENANTS.put(key, JSON.stringify(live));
    await testEnv.TENANTS.put(`tenant-token:${t.id}:${t.tokenId}`, await hashToken(t.token), {
      metadata: live,
    });
    await guardFromBeforeTokenRows(t.id);
    expect((await tokensOf(t)).map((r) => [r.id, typeof r.revoked_at])).toEqual([
      [t.tokenId, 'string'],
    ]);
    const healed = await testEnv.TENANTS.get<TokenRecord>(key, 'json');
    expect(healed?.revoked_at).toEqual(expect.any(String));
    expect(await works(t.token)).toBe(false);
  });
});
