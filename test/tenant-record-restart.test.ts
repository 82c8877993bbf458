/**
 * The tenant's record as its TenantGuard decided it outlives the object
 * (docs/SECURITY.md, "Tenant record changes are made in one place"): after the
 * guard restarts, while KV still shows an older copy (as another location's
 * replica may for up to 60 s), a change keeps what came before it, a deleted
 * tenant stays deleted, and a cache purge takes the platform key the guard
 * decided, not the one KV shows.
 */
import { evictDurableObject, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { ERRORS } from '../src/errors';
import { KeptRecordRow } from '../src/objects/tenant/record/kept-record';
import { guardFor, guardStub } from '../src/objects/tenant/tenant-guard';
import { tenantKey } from '../src/tenants/kv-keys';
import {
  admin,
  asTenant,
  createTenant,
  envelope,
  type TestTenant,
  tenantWithOwnKey,
  testEnv,
} from './helpers';

const patch = (id: string, body: Record<string, unknown>) =>
  admin(`/tenants/${id}`, { method: 'PATCH', body: JSON.stringify(body) });

/** The tenant's KV record as it is now: what a replica that has not caught up shows later. */
async function recordNow(tenantId: string): Promise<{ value: string; metadata: unknown }> {
  const { value, metadata } = await testEnv.TENANTS.getWithMetadata(tenantKey(tenantId));
  if (value === null) throw new Error(`no record for ${tenantId}`);
  return { value, metadata };
}

/** KV shows `older` again, and the tenant's TenantGuard starts afresh (evicted). */
async function restartWithStaleKv(
  tenantId: string,
  older: { value: string; metadata: unknown },
): Promise<void> {
  await testEnv.TENANTS.put(tenantKey(tenantId), older.value, { metadata: older.metadata });
  await evictDurableObject(guardStub(testEnv, tenantId));
}

/**
 * The guard as it is when it decided a disable and went away before writing it to KV:
 * the disabled record kept, KV still active, the alarm set to finish the writes.
 */
async function disableLeftHalfWritten(tenantId: string): Promise<void> {
  const active = JSON.parse((await recordNow(tenantId)).value);
  const disabled = { ...active, status: 'disabled', updated_at: new Date().toISOString() };
  await runInDurableObject(guardStub(testEnv, tenantId), async (_, state) => {
    new KeptRecordRow(state.storage.sql).keep({ record: disabled, kvHolds: active });
    await state.storage.setAlarm(Date.now() + 5000);
  });
  await evictDurableObject(guardStub(testEnv, tenantId));
}

/** The tenant is disabled everywhere: its record, its list row, its requests. */
async function expectDisabled(t: TestTenant, name?: string): Promise<void> {
  const shown = (await envelope(await admin(`/tenants/${t.id}`))).data;
  expect(shown).toMatchObject({ status: 'disabled', ...(name ? { name } : {}) });
  const listed = (await envelope(await admin(`/tenants?q=${t.id}`))).data.tenants;
  expect(listed).toMatchObject([{ status: 'disabled' }]);
  const call = await asTenant(t, '/agent/lists');
  expect(call.res.status).toBe(403);
  expect(call.body.code).toBe(ERRORS.TENANT_DISABLED.code);
}

describe("the guard's record after a restart, with KV behind", () => {
  it('a rename after the restart keeps the disable before it', async () => {
    const t = await createTenant();
    const active = await recordNow(t.id);
    expect((await admin(`/tenants/${t.id}/disable`, { method: 'POST' })).status).toBe(200);
    await restartWithStaleKv(t.id, active);

    const renamed = await patch(t.id, { name: 'renamed after restart' });
    expect(renamed.status).toBe(200);
    expect((await envelope(renamed)).data).toMatchObject({
      name: 'renamed after restart',
      status: 'disabled',
    });
    await expectDisabled(t, 'renamed after restart');
  });

  it('a deleted tenant is not brought back by a change after the restart', async () => {
    const t = await createTenant();
    const before = await recordNow(t.id);
    expect((await admin(`/tenants/${t.id}`, { method: 'DELETE' })).status).toBe(200);
    await restartWithStaleKv(t.id, before);

    const res = await patch(t.id, { name: 'back from the dead' });
    expect(res.status).toBe(404);
    expect((await envelope(res)).code).toBe(ERRORS.RESOURCE_NOT_FOUND.code);
    // Nothing was written from the stale copy: KV still shows it unchanged.
    expect(await testEnv.TENANTS.get(tenantKey(t.id))).toBe(before.value);
  });

  it("a purge after a key change reaches the new key's tenants while KV shows the old key", async () => {
    const sharer = await tenantWithOwnKey('sharer');
    const t = await tenantWithOwnKey('switching');
    const onOldKey = await recordNow(t.id);
    expect((await patch(t.id, { platform_key: sharer.platformKey })).status).toBe(200);
    // The sharer fills the cache under the key both now use.
    await asTenant(sharer, '/team/lists');
    expect((await asTenant(sharer, '/team/lists')).res.headers.get('x-cache')).toBe('HIT');
    await restartWithStaleKv(t.id, onOldKey);

    const purge = await admin(`/tenants/${t.id}/cache/purge`, { method: 'POST' });
    expect(purge.status).toBe(200);
    expect((await asTenant(sharer, '/team/lists')).res.headers.get('x-cache')).toBe('MISS');
    expect((await envelope(purge)).data).toEqual({ tenants: 2 });
  });

  it('a change decided and not yet written to KV is finished by the alarm', async () => {
    const t = await createTenant();
    await disableLeftHalfWritten(t.id);
    expect(await runDurableObjectAlarm(guardStub(testEnv, t.id))).toBe(true);
    await expectDisabled(t);
  });

  it('a change decided and not yet written to KV is finished by the next change', async () => {
    const t = await createTenant();
    await disableLeftHalfWritten(t.id);
    expect((await patch(t.id, { name: 'next change' })).status).toBe(200);
    await expectDisabled(t, 'next change');
  });
});

describe("a new tenant's guard", () => {
  it('keeps the record from creation: a change finds the tenant while KV does not show it yet', async () => {
    const t = await createTenant();
    // The guard's location has not seen the creation's KV write yet (KV: up to 60 s).
    const created = await recordNow(t.id);
    await testEnv.TENANTS.delete(tenantKey(t.id));
    const change = await guardFor(testEnv, t.id)
      .tenantRecord()
      .update(t.id, { name: 'Renamed at once' });
    expect(change?.after).toMatchObject({ id: t.id, name: 'Renamed at once', status: 'active' });
    expect(JSON.parse((await recordNow(t.id)).value)).toMatchObject({
      name: 'Renamed at once',
      key_fingerprint: JSON.parse(created.value).key_fingerprint,
    });
  });
});
