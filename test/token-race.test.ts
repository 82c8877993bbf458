/**
 * Token mutations that cannot be raced (docs/SECURITY.md, "Token changes are
 * decided in one place"): 40 self-rotations of one token race an operator's
 * revocation, all in flight at once, several rounds. Whatever the order the
 * runtime interleaves them in, the revocation wins: the token stays revoked in
 * KV (what authentication reads, with the limiter off too), it is never listed
 * as live again, at most one successor exists, and no rotation is recorded
 * after the revocation.
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
  gatewayWith,
  testEnv,
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
