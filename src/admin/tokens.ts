/** Operator API: a tenant's tokens. Secrets appear only in the answer that creates them. */
import { Hono } from 'hono';
import { z } from 'zod';
import type { HonoEnv } from '../env';
import { GatewayError } from '../errors';
import { requireJson, validated } from '../middleware/validate';
import {
  adminStore,
  audit,
  existingTenant,
  guardFor,
  ok,
  tenantParams,
  tokenParams,
} from './common';
import { newToken, tokenSpecSchema } from './token-spec';

/** How long a rotated-out token keeps working by default (README, limits). */
export const DEFAULT_ROTATION_OVERLAP_S = 3600;
const MAX_ROTATION_OVERLAP_S = 30 * 86_400;

const rotateBody = z
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
    requireJson(),
    validated('json', tokenSpecSchema),
    async (c) => {
      const { id } = c.req.valid('param');
      const store = await adminStore(c);
      await existingTenant(store, id);
      const issued = await store.issueToken(id, newToken(c.req.valid('json')));
      await audit(c, 'token.issued', {
        tenant_id: id,
        token_id: issued.record.id,
        detail: {
          name: issued.record.name,
          scopes: issued.record.scopes,
          expires_at: issued.record.expires_at,
        },
      });
      return c.json(ok({ ...issued.record, token: issued.token }), 201);
    },
  );

  app.get('/:id/tokens', validated('param', tenantParams), async (c) => {
    const { id } = c.req.valid('param');
    const store = await adminStore(c);
    await existingTenant(store, id);
    return c.json(ok({ tokens: await store.listTokens(id) }));
  });

  // A new token with the same name and scopes; the old one keeps working until
  // the overlap ends, so clients can switch without a failed request.
  app.post(
    '/:id/tokens/:token_id/rotate',
    validated('param', tokenParams),
    requireJson(),
    validated('json', rotateBody),
    async (c) => {
      const { id, token_id } = c.req.valid('param');
      const body = c.req.valid('json');
      const store = await adminStore(c);
      await existingTenant(store, id);
      const old = await store.getToken(id, token_id);
      if (!old) throw new GatewayError('RESOURCE_NOT_FOUND', 'No such token');

      const now = Date.now();
      if (old.record.expires_at && Date.parse(old.record.expires_at) <= now) {
        throw new GatewayError(
          'CONFLICT',
          'This token has already expired: issue a new one instead',
        );
      }
      const until = body.old_valid_until
        ? Date.parse(body.old_valid_until)
        : now + (body.overlap_s ?? DEFAULT_ROTATION_OVERLAP_S) * 1000;
      if (until < now || until > now + MAX_ROTATION_OVERLAP_S * 1000) {
        throw new GatewayError(
          'VALIDATION_FAILED',
          'old_valid_until must be between now and 30 days from now',
        );
      }
      const issued = await store.issueToken(id, {
        name: old.record.name,
        scopes: old.record.scopes,
        expires_at: old.record.expires_at,
      });
      const oldUntil = new Date(
        Math.min(until, old.record.expires_at ? Date.parse(old.record.expires_at) : Infinity),
      ).toISOString();
      await guardFor(c.env, id).expireAt(token_id, Date.parse(oldUntil));
      await store.setTokenExpiry(id, token_id, oldUntil);
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
    const store = await adminStore(c);
    await existingTenant(store, id);
    if (!(await store.getToken(id, token_id)))
      throw new GatewayError('RESOURCE_NOT_FOUND', 'No such token');
    await guardFor(c.env, id).revoke(token_id, Date.now());
    await store.deleteToken(id, token_id);
    await audit(c, 'token.revoked', { tenant_id: id, token_id });
    return c.json(ok({ token_id, revoked: true }));
  });

  return app;
}
