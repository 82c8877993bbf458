/**
 * A token rotation's body and bounds, shared by the operator API (POST
 * /admin/tenants/{id}/tokens/{token_id}/rotate), a partner's own POST /token/rotate and
 * the partner document: how long the old token keeps working (docs/OPERATING.md,
 * "Rotation"). No Worker code (the operator API's definitions use it).
 */
import * as z from 'zod';

/** How long a rotated-out token keeps working by default (docs/OPERATING.md, "Rotation"). */
export const DEFAULT_ROTATION_OVERLAP_S = 3600;
export const MAX_ROTATION_OVERLAP_S = 30 * 86_400;

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
