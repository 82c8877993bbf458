import { describe, expect, it } from 'vitest';
import { asTenant, createTenant, upstreamSaw } from './helpers';

describe('smoke', () => {
  it('lists teams through the gateway', async () => {
    const tenant = await createTenant();
    const { res, body, id } = await asTenant(tenant, '/team/lists');
    expect(res.status).toBe(200);
    expect(body.code).toBe(0);
    const seen = await upstreamSaw(id);
    expect(seen).toHaveLength(1);
  });
});
