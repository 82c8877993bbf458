/** Operator API: a tenant's tokens. Secrets appear only in the answer that creates them. */
import { Hono } from 'hono';
import * as z from 'zod';
import { GatewayError, invalidField } from '../errors';
import { tokenLimitsSchema } from '../guard/policy';
import { validated } from '../middleware/validate';
import type { Stores } from '../tenants/stores';
import { newTokenId } from '../tenants/token-store';
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
import { newToken, tokenSpecSchema } from './token-spec';

/** How long a rotated-out token keeps working by default (docs/OPERATING.md, "Rotation"). */
export const DEFAULT_ROTATION_OVERLAP_S = 3600;
const MAX_ROTATION_OVERLAP_S = 30 * 86_400;

export const rotateBody = z
  .strictObject({
    overlap_s: z.number().int().min(0).max(MAX_ROTATION_OVERLAP_S).optional(),
    old_valid_until: z.iso
      .datetime({
        offset: true,
        error: 'old_valid_until must be an ISO 8601 date-time with a zone',
      })
      .optional(),
  })
  .refine(
    (b) => !(b.overlap_s !== undefined && b.old_valid_until),
    'give overlap_s or old_valid_until, not both',
  );

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
      const token = newToken(spec);
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

      const now = Date.now();
      const oldEnds = old.record.expires_at ? Date.parse(old.record.expires_at) : Infinity;
      if (oldEnds <= now) {
        throw new GatewayError('CONFLICT', {
          message: 'This token has already expired: issue a new one instead',
        });
      }
      const until = body.old_valid_until
        ? Date.parse(body.old_valid_until)
        : now + (body.overlap_s ?? DEFAULT_ROTATION_OVERLAP_S) * 1000;
      if (until < now || until > now + MAX_ROTATION_OVERLAP_S * 1000) {
        throw invalidField(
          'body',
          'old_valid_until',
          'old_valid_until must be between now and 30 days from now',
        );
      }
      const successor = {
        id: newTokenId(),
        name: old.record.name,
        scopes: old.record.scopes,
        expires_at: old.record.expires_at,
      };
      // The new token keeps the old one's own limits, and its meters.
      await changeGuard(c, id, (g) => g.succeed(token_id, successor.id));
      const issued = await stores.tokens.issue(id, successor);
      const oldUntil = new Date(Math.min(until, oldEnds)).toISOString();
      await changeGuard(c, id, (g) => g.expireAt(token_id, Date.parse(oldUntil)));
      await stores.tokens.setExpiry(old, oldUntil);
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
