/**
 * Operator API: a tenant's tokens (their definitions: tokens.contract.ts). Secrets appear
 * only in the answer that creates them. Every change is decided by the tenant's
 * TenantGuard (objects/tenant/tokens/token-changes.ts), which writes KV from what it
 * decided; this side makes secrets and maps the outcomes.
 */
import type { Context } from 'hono';
import { GatewayError } from '../errors';
import { isolateAdmission } from '../limits/admission';
import type { TokenLimits } from '../metering/policy';
import { catalogOf } from '../operations/catalog';
import type { HonoEnv } from '../types/context';
import type { TokenListing } from '../types/wire';
import { adminStores, audit, auditContext, existingTenant, guardFor, mintToken } from './common';
import { type AdminApp, handle } from './handle';
import { decideRotation } from './rotation';
import { newToken } from './token-spec';
import * as contract from './tokens.contract';

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

export function tokenRoutes(app: AdminApp): void {
  handle(app, contract.issueToken, async (c, op) => {
    const { id } = c.req.valid('param');
    const stores = await adminStores(c);
    await existingTenant(stores, id);
    const spec = c.req.valid('json');
    const limits = spec.limits ?? null;
    const groups = catalogOf(c.get('settings')).groups;
    const issued = await mintToken(c, stores, id, newToken(spec, groups), limits);
    await audit(c, op.audit, {
      tenant_id: id,
      token_id: issued.record.id,
      detail: {
        name: issued.record.name,
        scopes: issued.record.scopes,
        expires_at: issued.record.expires_at,
        limits,
      },
    });
    return { ...issued.record, limits, token: issued.token };
  });

  // Oldest first, each with its family: who rotated it, when, and into which token.
  handle(app, contract.listTokens, async (c) => {
    const { id } = c.req.valid('param');
    await existingTenant(await adminStores(c), id);
    const tokens: TokenListing[] = await guardFor(c.env, id).tokens().list(id, Date.now());
    return { tokens };
  });

  // A token's own limits, counted besides its tenant's: a partner token capped at
  // 10/s cannot starve the tenant's other tokens.
  handle(app, contract.setTokenLimits, async (c, op) => {
    const { id, token_id } = c.req.valid('param');
    const limits = c.req.valid('json');
    await setTokenLimits(c, id, token_id, limits);
    await audit(c, op.audit, { tenant_id: id, token_id, detail: { limits } });
    return { token_id, limits };
  });

  handle(app, contract.removeTokenLimits, async (c, op) => {
    const { id, token_id } = c.req.valid('param');
    await setTokenLimits(c, id, token_id, null);
    await audit(c, op.audit, { tenant_id: id, token_id });
    return { token_id, limits: null };
  });

  // A new token with the same name and scopes; the old one keeps working until
  // the overlap ends, so clients can switch without a failed request.
  handle(app, contract.rotateToken, async (c) => {
    const { id, token_id } = c.req.valid('param');
    const stores = await adminStores(c);
    await existingTenant(stores, id);
    const { issued, oldUntil } = await decideRotation(c, stores, id, token_id, c.req.valid('json'));
    return {
      ...issued.record,
      token: issued.token,
      old_token: { id: token_id, expires_at: oldUntil },
    };
  });

  // Revocation is decided by the TenantGuard: it refuses the token on the very next
  // request on every isolate, and writes KV before answering. Successors stay unless
  // asked for (docs/OPERATING.md, "Rotation").
  handle(app, contract.revokeToken, async (c) => {
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
    return { token_id, revoked: true as const, successors_revoked: successors };
  });
}
