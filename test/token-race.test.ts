/**
 * Token mutations that cannot be raced (docs/SECURITY.md, "Token changes are
 * decided in one place"): 40 self-rotations of one token race an operator's
 * revocation, all in flight at once, several rounds. Whatever the order the
 * runtime interleaves them in, the revocation wins: the token stays revoked in
 * KV (what authentication reads, with the limiter off too), it is never listed
 * as live again, at most one successor exists, and no rotation is recorded
 * after the revocation.
 */
import { runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import type { TenantGuard } from '../src/objects/tenant/tenant-guard';
import { hashToken } from '../src/tenants/token';
import type { TokenRecord } from '../src/types/tenants';
import {
  admin,
  asTenant,
  createTenant,
  envelope,
  expectRefusal,
  gateway,
  gatewayWith,
  testEnv,
  until,
} from './helpers';

const ROTATIONS = 40;
const ROUNDS = 5;

async function issueRotatable(tenantId: string) {
  const res = await admin(`/tenants/${tenantId}/tokens`, {
    method: 'POST',
    body: JSON.stringify({ name: 'partner', scopes: ['read-only', 'token:rotate'] }),
  });
  const body = await envelope(res);
  expect(res.status, JSON.stringify(body)).toBe(201);
  return { token: body.data.token as string, id: body.data.id as string };
}

function rotate(token: string): Promise<Response> {
  return gateway('/token/rotate', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ overlap_s: 600 }),
  });
}

describe('rotation racing revocation', () => {
  it(`${ROTATIONS} self-rotations racing one revocation: the revocation wins, ${ROUNDS} rounds`, async () => {
    const t = await createTenant();
    for (let round = 0; round < ROUNDS; round++) {
      const victim = await issueRotatable(t.id);
      // The revocation starts once the first rotation has answered, while the others are
      // still in flight, at every stage of their work; more rotations follow it.
      const rotations = Array.from({ length: ROTATIONS }, () => rotate(victim.token));
      await Promise.race(rotations);
      // Odd rounds revoke the successors too: then nothing of the family works afterwards.
      const withSuccessors = round % 2 === 1;
      const revocation = admin(
        `/tenants/${t.id}/tokens/${victim.id}?with_successors=${withSuccessors}`,
        { method: 'DELETE' },
      );
      const more = Array.from({ length: ROTATIONS / 2 }, () => rotate(victim.token));
      const answers = await Promise.all([...rotations, ...more]);
      expect((await revocation).status, `round ${round}`).toBe(200);

      const created = answers.filter((r) => r.status === 201);
      expect(created.length, `round ${round}: successors`).toBeLessThanOrEqual(1);
      const successors: string[] = [];
      for (const r of answers) {
        // Each refused rotation says why: revoked (401), or a successor is pending (409).
        expect([201, 401, 409], `round ${round}`).toContain(r.status);
        const body = await envelope(r);
        if (r.status === 201) successors.push(body.data.token);
        if (r.status === 409) expect(body.code).toBe(40902);
      }
      // A successor decided before the revocation stays only when it was not asked to go.
      for (const successor of successors) {
        const res = await gateway('/token', { headers: { authorization: `Bearer ${successor}` } });
        expect(res.status, `round ${round}: successor`).toBe(withSuccessors ? 401 : 200);
        await res.body?.cancel();
      }

      // KV, as authentication reads it, says revoked.
      const record = await testEnv.TENANTS.get<TokenRecord>(
        `token:${await hashToken(victim.token)}`,
        'json',
      );
      expect(record?.revoked_at, `round ${round}: KV record`).toEqual(expect.any(String));
      // With the limiter off, KV is all that decides: still refused.
      for (const path of ['/token', '/usage']) {
        const res = await gatewayWith({ LIMITS_ENABLED: 'false' }, path, {
          headers: { authorization: `Bearer ${victim.token}` },
        });
        await expectRefusal(res, 'TOKEN_REVOKED');
      }
      // The tenant's list (revoked tokens stay listed 90 days) never shows it as live again.
      const listed = await envelope(await admin(`/tenants/${t.id}/tokens`));
      const row = listed.data.tokens.find((r: { id: string }) => r.id === victim.id);
      expect(row?.revoked_at, `round ${round}: listed as revoked`).toEqual(expect.any(String));
      // The audit log has no rotation of it after its revocation.
      const log = await envelope(await admin(`/audit?tenant_id=${t.id}&page_size=100`));
      const actions = (log.data.data as { action: string; token_id: string }[])
        .filter((e) => e.token_id === victim.id)
        .map((e) => e.action);
      const revokedAt = actions.indexOf('token.revoked');
      expect(revokedAt, `round ${round}: ${actions.join(', ')}`).toBeGreaterThanOrEqual(0);
      // Newest first: nothing before the revocation's entry may be a rotation.
      expect(actions.slice(0, revokedAt), `round ${round}`).not.toContain('token.rotated');
    }
  });
});

describe("taking in KV's tokens (once per tenant)", () => {
  it('admits requests while KV is read, and the token calls share one read', async () => {
    const t = await createTenant(undefined, 'adopting');
    await admin(`/tenants/${t.id}/limits`, {
      method: 'PUT',
      body: JSON.stringify({ policies: [], quota: {}, limiter: 'exact' }),
    });
    const guard = testEnv.TENANT_GUARD.get(testEnv.TENANT_GUARD.idFromName(t.id));
    // The guard as it was before it took KV's tokens in, its KV held at its list until
    // the test lets it go (the real KV behind it: the wrapper only waits and counts).
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let lists = 0;
    const records = (g: TenantGuard) =>
      Reflect.get(Reflect.get(Reflect.get(g, 'parts'), 'tokens'), 'deps');
    let stored: (tenantId: string) => Promise<unknown> = async () => [];
    await runInDurableObject(guard, (g: TenantGuard) => {
      const { settings, io } = records(g);
      settings.put('tokens_adopted', null);
      stored = io.tokenRecords.stored;
      io.tokenRecords.stored = async (tenantId: string) => {
        lists += 1;
        await held;
        return stored(tenantId);
      };
    });
    try {
      const listings = [admin(`/tenants/${t.id}/tokens`), admin(`/tenants/${t.id}/tokens`)];
      await until(async () => lists > 0, "the guard reading KV's tokens");
      // An admission, through the same guard, while that read is held.
      let admitted = 0;
      const request = asTenant(t, '/agent/lists').then((r) => {
        admitted = r.res.status;
      });
      await until(async () => admitted !== 0, 'an admission while KV is read', 5000);
      expect(admitted).toBe(200);
      release();
      await request;
      for (const res of await Promise.all(listings)) {
        const body = await envelope(res);
        expect(body.data.tokens.map((r: { id: string }) => r.id)).toContain(t.tokenId);
      }
      expect(lists).toBe(1);
    } finally {
      release();
      await runInDurableObject(guard, (g: TenantGuard) => {
        records(g).io.tokenRecords.stored = stored;
      });
    }
  });
});
