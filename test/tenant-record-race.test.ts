/**
 * Tenant record changes that cannot be raced (docs/SECURITY.md, "Tenant record
 * changes are made in one place"): operator changes of one tenant's fields, all
 * in flight at once, several rounds, each end with every change in the record,
 * its list row, its KV indexes and what the gateway does with the tenant's
 * requests. A change racing a deletion never brings the tenant back, and renames
 * racing a key rotation's re-sealing neither undo it nor are undone by it.
 */
import { describe, expect, it } from 'vitest';
import { ERRORS } from '../src/errors';
import { sha256Hex } from '../src/hash';
import { corsOriginKey, keyTenantKey, tenantKey } from '../src/tenants/kv-keys';
import { shortFingerprint } from '../src/tenants/tenant-store';
import {
  admin,
  asTenant,
  createTenant,
  envelope,
  gatewayWith,
  platformKeys,
  testEnv,
  upstreamSaw,
} from './helpers';

const ROUNDS = 8;
/** Most waves of changes sent while one deletion runs (it usually answers within a few). */
const WAVES_MAX = 100;
/** Rounds of the re-sealing test, and the tenants it changes in each (it walks them all). */
const RESEAL_ROUNDS = 5;
const TENANTS_RESEALED = 6;
/** Most renames of one tenant while the re-sealing runs (it slows as they pile up). */
const RENAMES_MAX = 5;

const patch = (id: string, body: Record<string, unknown>) =>
  admin(`/tenants/${id}`, { method: 'PATCH', body: JSON.stringify(body) });
const post = (id: string, action: string) => admin(`/tenants/${id}/${action}`, { method: 'POST' });
const originsOf = (round: number) => [`https://round-${round}.example`];

/** Those of `origins` the CORS index holds for the tenant (what preflights are answered from). */
async function indexed(tenantId: string, origins: string[]): Promise<string[]> {
  const held = await Promise.all(
    origins.map((o) => testEnv.TENANTS.get(corsOriginKey(o, tenantId))),
  );
  return origins.filter((_, i) => held[i] !== null);
}

async function expectNoSuchTenant(res: Response): Promise<void> {
  expect(res.status).toBe(404);
  expect((await envelope(res)).code).toBe(ERRORS.RESOURCE_NOT_FOUND.code);
}

describe('tenant record changes racing each other', () => {
  it(`a rename, a status change, new origins and a new key at once: all kept, ${ROUNDS} rounds`, async () => {
    const t = await createTenant(platformKeys.demo);
    const keys = [platformKeys.demo, platformKeys.demoSecond];
    const fingerprints = await Promise.all(keys.map((k) => sha256Hex(k)));
    const everyOrigin = Array.from({ length: ROUNDS }, (_, r) => originsOf(r)).flat();
    for (let round = 0; round < ROUNDS; round++) {
      const status = round % 2 === 0 ? 'disabled' : 'active';
      const name = `renamed ${round}`;
      const key = (round + 1) % 2;
      const answers = await Promise.all([
        patch(t.id, { name }),
        post(t.id, status === 'disabled' ? 'disable' : 'enable'),
        patch(t.id, { cors_origins: originsOf(round) }),
        patch(t.id, { platform_key: keys[key] }),
      ]);
      for (const res of answers) expect(res.status, `round ${round}`).toBe(200);

      const wanted = {
        id: t.id,
        name,
        status,
        key_fingerprint: shortFingerprint(fingerprints[key]!),
      };
      const shown = (await envelope(await admin(`/tenants/${t.id}`))).data;
      expect(shown, `round ${round}: the record`).toMatchObject({
        ...wanted,
        cors_origins: originsOf(round),
      });
      const listed = (await envelope(await admin(`/tenants?q=${t.id}`))).data.tenants;
      expect(listed, `round ${round}: its list row`).toMatchObject([wanted]);
      expect(await indexed(t.id, everyOrigin), `round ${round}: origin index`).toEqual(
        originsOf(round),
      );
      const keyIndex = await Promise.all(
        fingerprints.map((fp) => testEnv.TENANTS.get(keyTenantKey(fp, t.id))),
      );
      expect(
        keyIndex.map((entry) => entry !== null),
        `round ${round}: key index`,
      ).toEqual(keys.map((_, i) => i === key));

      // The gateway does what the record says: refuses a disabled tenant, else sends its key.
      const call = await asTenant(t, '/agent/lists');
      if (status === 'disabled') {
        expect(call.res.status, `round ${round}: refused`).toBe(403);
        expect(call.body.code).toBe(ERRORS.TENANT_DISABLED.code);
      } else {
        expect(call.res.status, `round ${round}: served`).toBe(200);
        expect((await upstreamSaw(call.id))[0]!.headers['x-api-key']).toBe(keys[key]);
      }
    }
  });

  it(`changes racing a deletion never bring the tenant back, ${ROUNDS} rounds`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const t = await createTenant();
      expect((await patch(t.id, { cors_origins: originsOf(round) })).status).toBe(200);
      const deletion = admin(`/tenants/${t.id}`, { method: 'DELETE' });
      let deleted = false;
      void deletion.then(() => {
        deleted = true;
      });
      // Renames, enables and new origins keep coming, three at a time, until the deletion
      // has answered: some read the record before it goes and would write it after.
      const answers: Response[] = [];
      for (let wave = 0; wave === 0 || (!deleted && wave < WAVES_MAX); wave++) {
        answers.push(
          ...(await Promise.all([
            patch(t.id, { name: `renamed ${round}.${wave}` }),
            post(t.id, 'enable'),
            patch(t.id, { cors_origins: originsOf(round + 1) }),
          ])),
        );
      }
      expect((await deletion).status, `round ${round}`).toBe(200);
      for (const res of answers) {
        if (res.status !== 200) await expectNoSuchTenant(res);
      }

      await expectNoSuchTenant(await admin(`/tenants/${t.id}`));
      expect(await testEnv.TENANTS.get(tenantKey(t.id)), `round ${round}: record`).toBeNull();
      expect((await envelope(await admin(`/tenants?q=${t.id}`))).data.tenants).toEqual([]);
      expect(await indexed(t.id, [...originsOf(round), ...originsOf(round + 1)])).toEqual([]);
      const fp = await sha256Hex(platformKeys.demo);
      expect(await testEnv.TENANTS.get(keyTenantKey(fp, t.id)), `round ${round}`).toBeNull();
      expect((await asTenant(t, '/agent/lists')).res.status).toBe(401);
    }
  });

  it(`re-sealing for a key rotation and renames at once: both kept, ${RESEAL_ROUNDS} rounds`, async () => {
    const onlyOld = { KEY_ENCRYPTION_KEY: `k1:${'A'.repeat(43)}=` };
    const keyFingerprint = shortFingerprint(await sha256Hex(platformKeys.demo));
    for (let round = 0; round < RESEAL_ROUNDS; round++) {
      // Sealed under k1, which the gateway's ring (k2 first) re-seals under k2.
      const ids: string[] = [];
      for (let i = 0; i < TENANTS_RESEALED; i++) {
        const created = await gatewayWith(onlyOld, '/admin/tenants', {
          method: 'POST',
          headers: {
            authorization: `Bearer ${testEnv.ADMIN_TOKEN}`,
            'content-type': 'application/json',
          },
          body: JSON.stringify({ name: `old key ${round}.${i}`, platform_key: platformKeys.demo }),
        });
        ids.push((await envelope(created)).data.tenant_id as string);
      }
      // Each tenant is renamed again and again (a bounded number of times) while the
      // re-sealing walks the tenants, so some rename reads the record before it is
      // re-sealed and writes after, or the other way round.
      let resealed = false;
      const reencrypt = admin('/maintenance/reencrypt', { method: 'POST' }).then((res) => {
        resealed = true;
        return res;
      });
      const lastNames = await Promise.all(
        ids.map(async (id) => {
          let name = '';
          for (let n = 0; n === 0 || (n < RENAMES_MAX && !resealed); n++) {
            name = `renamed ${round}.${n}`;
            expect((await patch(id, { name })).status).toBe(200);
          }
          return name;
        }),
      );
      expect((await reencrypt).status).toBe(200);
      for (const [i, id] of ids.entries()) {
        const shown = (await envelope(await admin(`/tenants/${id}`))).data;
        expect(shown, `round ${round}: the last rename`).toMatchObject({
          name: lastNames[i],
          key_fingerprint: keyFingerprint,
        });
        const stored = JSON.parse((await testEnv.TENANTS.get(tenantKey(id)))!);
        expect(stored.platform_key_sealed, `round ${round}: re-sealed`).toMatch(/^v1\.k2\./);
      }
    }
  });
});
