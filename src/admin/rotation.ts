/**
 * Token rotation, shared by the operator API (any token of a tenant) and a
 * partner's own `POST /token/rotate`: a new token with the same name, scopes,
 * expiry and own limits; the old one keeps working until the overlap ends
 * (docs/OPERATING.md, "Rotation").
 */
import type { Context } from 'hono';
import type * as z from 'zod';
import { GatewayError, invalidField } from '../errors';
import { isolateAdmission } from '../limits/admission';
import type { RotateOutcome } from '../objects/tenant/tokens/token-registry';
import {
  DEFAULT_ROTATION_OVERLAP_S,
  MAX_ROTATION_OVERLAP_S,
  type rotateBody,
} from '../tenants/rotate-body';
import type { Stores } from '../tenants/stores';
import type { Issued } from '../tenants/token-store';
import type { HonoEnv } from '../types/context';
import { auditContext, guardFor } from './common';

export interface Rotated {
  issued: Issued;
  /** When the old token stops working. */
  oldUntil: string;
}

/**
 * Rotates a token. Its tenant's TenantGuard decides it against the token's
 * state there (revoked, expired, a rotation already in progress in its
 * family), so a rotation and a revocation can never both act on what the other
 * has not seen; the answer comes once KV holds the decided records.
 * `actor`: who rotates (audited): the operator, or `token:<id>` for itself.
 */
export async function decideRotation(
  c: Context<HonoEnv>,
  stores: Stores,
  tenantId: string,
  tokenId: string,
  body: z.infer<typeof rotateBody>,
  actor?: string,
): Promise<Rotated> {
  const now = Date.now();
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
  const { token, ...minted } = await stores.tokens.mint();
  const outcome = await guardFor(c.env, tenantId)
    .tokens()
    .rotate(tenantId, tokenId, minted, until, now, auditContext(c, actor));
  isolateAdmission.forget(tenantId);
  if (outcome.kind !== 'rotated') throw rotationRefused(outcome, actor !== undefined);
  stores.tokens.forget([outcome.old, outcome.successor]);
  return {
    issued: { token, record: outcome.successor.record },
    oldUntil: outcome.old.record.expires_at ?? new Date(until).toISOString(),
  };
}

/** Why a rotation was refused, as the caller sees it (docs/ERRORS.md). */
function rotationRefused(
  outcome: Exclude<RotateOutcome, { kind: 'rotated' }>,
  self: boolean,
): GatewayError {
  switch (outcome.kind) {
    case 'not_found':
      return self
        ? new GatewayError('INVALID_TOKEN')
        : new GatewayError('RESOURCE_NOT_FOUND', { message: 'No such token' });
    case 'revoked':
      // Its own caller is refused as any revoked token is; the operator is told why.
      return self
        ? new GatewayError('TOKEN_REVOKED')
        : new GatewayError('CONFLICT', { message: 'This token was revoked: issue a new one' });
    case 'expired':
      return new GatewayError('CONFLICT', {
        message: 'This token has already expired: issue a new one instead',
      });
    case 'grant':
      return new GatewayError('CONFLICT', {
        message:
          "An OAuth grant's token is renewed by its app's refresh, never rotated: revoke it to end the grant",
      });
    case 'successor_pending':
      return new GatewayError('ROTATION_IN_PROGRESS', {
        message: `This token was already rotated: its successor ${outcome.successorId} works`,
        details: { successor_id: outcome.successorId },
      });
    case 'ancestor_working':
      return new GatewayError('ROTATION_IN_PROGRESS', {
        message:
          `The token this one replaced (${outcome.ancestorId}) still works` +
          (outcome.until ? ` until ${outcome.until}` : '') +
          ': rotate once its overlap has ended, or revoke it first',
        details: { ancestor_id: outcome.ancestorId, ancestor_valid_until: outcome.until },
      });
  }
}
