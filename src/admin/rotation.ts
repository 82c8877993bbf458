/**
 * Token rotation, shared by the operator API (any token of a tenant) and a
 * partner's own `POST /token/rotate`: a new token with the same name, scopes,
 * expiry and own limits; the old one keeps working until the overlap ends.
 */
import type { Context } from 'hono';
import * as z from 'zod';
import { GatewayError, invalidField } from '../errors';
import type { Stores } from '../tenants/stores';
import { type Issued, newTokenId, type TokenEntry } from '../tenants/token-store';
import type { HonoEnv } from '../types/context';
import { changeGuard } from './common';

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

export interface Rotated {
  issued: Issued;
  /** When the old token stops working. */
  oldUntil: string;
}

export async function rotateToken(
  c: Context<HonoEnv>,
  stores: Stores,
  tenantId: string,
  old: TokenEntry,
  body: z.infer<typeof rotateBody>,
): Promise<Rotated> {
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
  await changeGuard(c, tenantId, (g) => g.succeed(old.record.id, successor.id));
  const issued = await stores.tokens.issue(tenantId, successor);
  const oldUntil = new Date(Math.min(until, oldEnds)).toISOString();
  await changeGuard(c, tenantId, (g) => g.expireAt(old.record.id, Date.parse(oldUntil)));
  await stores.tokens.setExpiry(old, oldUntil);
  return { issued, oldUntil };
}
