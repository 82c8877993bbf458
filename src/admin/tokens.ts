/**
 * Operator API: a tenant's tokens. Secrets appear only in the answer that creates them.
 * Every change is decided by the tenant's TenantGuard
 * (objects/tenant/tokens/token-changes.ts), which writes KV from what it decided; this
 * side makes secrets and maps the outcomes.
 */
import { type Context, Hono } from 'hono';
import * as z from 'zod';
import { GatewayError } from '../errors';
import { isolateAdmission } from '../limits/admission';
import { type TokenLimits, tokenLimitsSchema } from '../metering/policy';
import { validated } from '../middleware/validate';
import { catalogOf } from '../routes/catalog';
import type { HonoEnv } from '../types/context';
import type { IssuedToken, RevokedToken, RotatedToken, TokenListing } from '../types/wire';
import {
  adminStores,
  audit,
  auditContext,
  existingTenant,
  guardFor,
  issueToken,
  ok,
  tenantParams,
  tokenParams,
} from './common';
import { rotateBody, rotateToken } from './rotation';
import { newToken, tokenSpecSchema } from './token-spec';

/** `?with_successors=true` revokes every token rotated from this one too. */
export const revokeQuery = z.strictObject({
  with_successors: z
    .enum(['true', 'false'], { error: 'with_successors must be true or false' })
    .default('false')
    .transform((v) => v === 'true'),
});

const noSuchToken = () => new GatewayError('RESOURCE_NOT_FOUND', { message: 'No such token' });

/** Sets or removes a known, unrevoked token's own limits in its tenant's TenantGuard. */
async function setTokenLimits(
  c: Context<HonoEnv>,
  tenantId: string,
  tokenId: string,
  limits: TokenLimits | null,
): Promise<void> {
  await existingTenant(await adminStores(c), tenantId);
  if (!(await guardFor(c.env, tenantId).tokens().setLimits(tenantId, tokenId, limits))) {
    throw noSuchToken();
  }
  isolateAdmission.forget(tenantId);
}

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
      const limits = spec.limits ?? null;
      const groups = catalogOf(c.get('settings')).groups;
      const issued = await issueToken(c, stores, id, newToken(spec, groups), limits);
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
      return c.json(ok<IssuedToken>({ ...issued.record, limits, token: issued.token }), 201);
    },
  );

  // Oldest first, each with its family: who rotated it, when, and into which token.
  app.get('/:id/tokens', validated('param', tenantParams), async (c) => {
    const { id } = c.req.valid('param');
    await existingTenant(await adminStores(c), id);
    const tokens: TokenListing[] = await guardFor(c.env, id).tokens().list(id, Date.now());
    return c.json(ok({ tokens }));
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
      await setTokenLimits(c, id, token_id, limits);
      await audit(c, 'token.limits_set', { tenant_id: id, token_id, detail: { limits } });
      return c.json(ok({ token_id, limits }));
    },
  );

  app.delete('/:id/tokens/:token_id/limits', validated('param', tokenParams), async (c) => {
    const { id, token_id } = c.req.valid('param');
    await setTokenLimits(c, id, token_id, null);
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
      const stores = await adminStores(c);
      await existingTenant(stores, id);
      const { issued, oldUntil } = await rotateToken(c, stores, id, token_id, c.req.valid('json'));
      return c.json(
        ok<RotatedToken>({
          ...issued.record,
          token: issued.token,
          old_token: { id: token_id, expires_at: oldUntil },
        }),
        201,
      );
    },
  );

  // Revocation is decided by the TenantGuard: it refuses the token on the very next
  // request on every isolate, and writes KV before answering. Successors stay unless
  // asked for (docs/OPERATING.md, "Rotation").
  app.delete(
    '/:id/tokens/:token_id',
    validated('param', tokenParams),
    validated('query', revokeQuery),
    async (c) => {
      const { id, token_id } = c.req.valid('param');
      const { with_successors } = c.req.valid('query');
      const stores = await adminStores(c);
      await existingTenant(stores, id);
      const outcome = await guardFor(c.env, id)
        .tokens()
        .revoke(id, token_id, with_successors, Date.now(), auditContext(c));
      isolateAdmission.forget(id);
      if (outcome.kind === 'not_found') throw noSuchToken();
      stores.tokens.forget(outcome.revoked);
      const successors = outcome.revoked.map((e) => e.record.id).filter((t) => t !== token_id);
      return c.json(ok<RevokedToken>({ token_id, revoked: true, successors_revoked: successors }));
    },
  );

  return app;
}
