/** Operator API: a tenant's tokens. Secrets appear only in the answer that creates them. */
import { Hono } from 'hono';
import { GatewayError } from '../errors';
import { tokenLimitsSchema } from '../guard/policy';
import { validated } from '../middleware/validate';
import { catalogOf } from '../routes/catalog';
import type { Stores } from '../tenants/stores';
import type { HonoEnv } from '../types/context';
import {
  adminStores,
  audit,
  changeGuard,
  existingTenant,
  guardFor,
  limitToken,
  ok,
  tenantParams,
  tokenParams,
} from './common';
import { rotateBody, rotateToken } from './rotation';
import { newToken, tokenSpecSchema } from './token-spec';

export function tokenRoutes(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();

  app.post(
    '/:id/tokens',
    validated('param', tenantParams),
    validated('json', tokenSpecSchema),
    async (c) => {
      const { id } = c.req.valid('param');
      const stores = await adminStores(c);
      await existingTenant(stores, id);
      const spec = c.req.valid('json');
      const token = newToken(spec, catalogOf(c.get('settings')).groups);
      const limits = spec.limits ?? null;
      await limitToken(c, id, token.id, limits);
      const issued = await stores.tokens.issue(id, token);
      await audit(c, 'token.issued', {
        tenant_id: id,
        token_id: issued.record.id,
        detail: {
          name: issued.record.name,
          scopes: issued.record.scopes,
          expires_at: issued.record.expires_at,
          limits,
        },
      });
      return c.json(ok({ ...issued.record, limits, token: issued.token }), 201);
    },
  );

  app.get('/:id/tokens', validated('param', tenantParams), async (c) => {
    const { id } = c.req.valid('param');
    const stores = await adminStores(c);
    await existingTenant(stores, id);
    const [tokens, limits] = await Promise.all([
      stores.tokens.list(id),
      guardFor(c.env, id).allTokenLimits(),
    ]);
    return c.json(ok({ tokens: tokens.map((t) => ({ ...t, limits: limits[t.id] ?? null })) }));
  });

  // A token's own limits, counted besides its tenant's: a partner token capped at
  // 10/s cannot starve the tenant's other tokens.
  app.put(
    '/:id/tokens/:token_id/limits',
    validated('param', tokenParams),
    validated('json', tokenLimitsSchema),
    async (c) => {
      const { id, token_id } = c.req.valid('param');
      const limits = c.req.valid('json');
      const stores = await adminStores(c);
      await existingTenant(stores, id);
      await existingToken(stores, id, token_id);
      await changeGuard(c, id, (g) => g.setTokenLimits(token_id, limits));
      await audit(c, 'token.limits_set', { tenant_id: id, token_id, detail: { limits } });
      return c.json(ok({ token_id, limits }));
    },
  );

  app.delete('/:id/tokens/:token_id/limits', validated('param', tokenParams), async (c) => {
    const { id, token_id } = c.req.valid('param');
    const stores = await adminStores(c);
    await existingTenant(stores, id);
    await existingToken(stores, id, token_id);
    await changeGuard(c, id, (g) => g.setTokenLimits(token_id, null));
    await audit(c, 'token.limits_removed', { tenant_id: id, token_id });
    return c.json(ok({ token_id, limits: null }));
  });

  // A new token with the same name and scopes; the old one keeps working until
  // the overlap ends, so clients can switch without a failed request.
  app.post(
    '/:id/tokens/:token_id/rotate',
    validated('param', tokenParams),
    validated('json', rotateBody),
    async (c) => {
      const { id, token_id } = c.req.valid('param');
      const body = c.req.valid('json');
      const stores = await adminStores(c);
      await existingTenant(stores, id);
      const old = await existingToken(stores, id, token_id);

      const { issued, oldUntil } = await rotateToken(c, stores, id, old, body);
      await audit(c, 'token.rotated', {
        tenant_id: id,
        token_id,
        detail: { new_token_id: issued.record.id, old_valid_until: oldUntil },
      });
      return c.json(
        ok({
          ...issued.record,
          token: issued.token,
          old_token: { id: token_id, expires_at: oldUntil },
        }),
        201,
      );
    },
  );

  // Revocation goes to the TenantGuard first: it refuses the token on the very
  // next request on every isolate, long before KV's deletion propagates.
  app.delete('/:id/tokens/:token_id', validated('param', tokenParams), async (c) => {
    const { id, token_id } = c.req.valid('param');
    const stores = await adminStores(c);
    await existingTenant(stores, id);
    const entry = await existingToken(stores, id, token_id);
    await changeGuard(c, id, (g) => g.revoke(token_id, Date.now()));
    await stores.tokens.revoke(entry);
    await audit(c, 'token.revoked', { tenant_id: id, token_id });
    return c.json(ok({ token_id, revoked: true }));
  });

  return app;
}

async function existingToken(stores: Stores, tenantId: string, tokenId: string) {
  const entry = await stores.tokens.find({ tenantId, tokenId });
  if (!entry) throw new GatewayError('RESOURCE_NOT_FOUND', { message: 'No such token' });
  return entry;
}
