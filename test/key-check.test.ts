/**
 * "Check key" (docs/OPERATING.md, "Checking a platform key"): one cheap read with a
 * typed or stored platform key says what the platform made of it (valid,
 * unauthorized, unreachable, error), reaches the platform with the key in the
 * route's header, and never shows the key. And a second tenant with the same name
 * and key is refused, naming the first.
 */
import { describe, expect, it } from 'vitest';
import {
  ADMIN_TOKEN,
  admin,
  createTenant,
  envelope,
  expectRefusal,
  gatewayWith,
  injectFault,
  platformKeys,
  requestId,
  upstreamSaw,
} from './helpers';

async function check(body: unknown, id = requestId('check')) {
  const res = await admin('/keys/check', {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'x-request-id': id },
  });
  return { res, id, body: await envelope(res) };
}

describe('checking a platform key', () => {
  it('says valid for a working key, with one read in the route header, and never shows the key', async () => {
    const { res, id, body } = await check({ platform_key: platformKeys.demo });
    expect(res.status).toBe(200);
    expect(body.data).toMatchObject({
      result: 'valid',
      status: 200,
      code: 0,
      operation: 'calls.filter_values',
    });
    const seen = await upstreamSaw(id);
    expect(seen.map((r) => [r.method, r.path])).toEqual([['GET', '/user/call/filter_values']]);
    expect(seen[0]?.headers.authorization).toBe(platformKeys.demo);
    expect(JSON.stringify(body)).not.toContain(platformKeys.demo);
  });

  it('says unauthorized for a made-up key', async () => {
    const madeUp = `sk-made-up-${crypto.randomUUID()}`;
    const { body } = await check({ platform_key: madeUp });
    expect(body.data).toMatchObject({ result: 'unauthorized', status: 401 });
    expect(JSON.stringify(body)).not.toContain(madeUp);
  });

  it('says unreachable when the platform does not answer in time, error for a 5xx', async () => {
    const slow = requestId('slow');
    await injectFault({ request_id: slow, kind: 'hang', delay_ms: 2000 });
    const res = await gatewayWith({ UPSTREAM_TIMEOUT_MS: '200' }, '/admin/keys/check', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${ADMIN_TOKEN}`,
        'content-type': 'application/json',
        'x-request-id': slow,
      },
      body: JSON.stringify({ platform_key: platformKeys.demo }),
    });
    expect((await envelope(res)).data).toMatchObject({ result: 'unreachable', status: null });

    const failing = requestId('failing');
    await injectFault({ request_id: failing, kind: 'status', status: 500 });
    const { body } = await check({ platform_key: platformKeys.demo }, failing);
    expect(body.data).toMatchObject({ result: 'error', status: 500 });
  });

  it("checks a tenant's stored key the same way", async () => {
    const t = await createTenant();
    const res = await admin(`/tenants/${t.id}/key/check`, { method: 'POST' });
    expect((await envelope(res)).data.result).toBe('valid');
    const unknown = await admin('/tenants/ten_0000000000000000/key/check', { method: 'POST' });
    await expectRefusal(unknown, 'RESOURCE_NOT_FOUND');
  });

  it('refuses a key that could not go in a header, naming the field', async () => {
    const refused = await check({ platform_key: 'has space inside' });
    const body = await expectRefusal(refused, 'VALIDATION_FAILED');
    expect(body.data.errors[0].field).toBe('platform_key');
  });
});

describe('a second tenant with the same name and platform key', () => {
  it('is refused (409), naming the first; another name or another key is fine', async () => {
    const name = `Twin ${crypto.randomUUID().slice(0, 8)}`;
    const make = (body: Record<string, unknown>) =>
      admin('/tenants', { method: 'POST', body: JSON.stringify(body) });
    const first = await make({ name, platform_key: platformKeys.demo });
    expect(first.status).toBe(201);
    const firstId = (await envelope(first)).data.tenant_id;
    // The same name in another case and with spaces around it is the same name.
    const again = await make({ name: ` ${name.toUpperCase()} `, platform_key: platformKeys.demo });
    const refused = await expectRefusal(again, 'CONFLICT');
    expect(refused.data.tenant_id).toBe(firstId);
    expect(refused.msg).toContain(firstId);
    expect(refused.msg).not.toContain(platformKeys.demo);
    expect((await make({ name: `${name} 2`, platform_key: platformKeys.demo })).status).toBe(201);
    expect((await make({ name, platform_key: platformKeys.other })).status).toBe(201);
    // Renamed, the first no longer stands in the way of its old name.
    await admin(`/tenants/${firstId}`, {
      method: 'PATCH',
      body: JSON.stringify({ name: `${name} renamed` }),
    });
    expect((await make({ name, platform_key: platformKeys.demo })).status).toBe(201);
  });
});
