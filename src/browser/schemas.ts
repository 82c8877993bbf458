/**
 * What browser-facing routes accept, apart from their handlers, so the
 * OpenAPI document (openapi/document.ts) can use them without the runtime.
 */
import * as z from 'zod';
import { opaqueId, originField } from '../operations/schemas';
import { BROWSER_TOKEN_MAX_TTL_S, BROWSER_TOKEN_MIN_TTL_S } from '../tenants/browser-token';
import { requiredScope } from '../tenants/scopes';

/** Lifetime when the caller names none (docs/BOUNDS.md). */
export const BROWSER_TOKEN_DEFAULT_TTL_S = 900;

export const mintBody = z.strictObject({
  origin: originField(),
  scopes: z.array(z.string().max(64)).min(1).max(32).optional(),
  ttl_s: z
    .number()
    .int()
    .min(
      BROWSER_TOKEN_MIN_TTL_S,
      `ttl_s must be from ${BROWSER_TOKEN_MIN_TTL_S} to ${BROWSER_TOKEN_MAX_TTL_S}`,
    )
    .max(
      BROWSER_TOKEN_MAX_TTL_S,
      `ttl_s must be from ${BROWSER_TOKEN_MIN_TTL_S} to ${BROWSER_TOKEN_MAX_TTL_S}`,
    )
    .default(BROWSER_TOKEN_DEFAULT_TTL_S),
});

/** Opening a session's event stream reads the session. */
export const STREAM_SCOPE = requiredScope({ group: 'sessions', method: 'GET' });

/** `/session/ws/{session_id}`'s path. */
export const streamParams = z.object({ session_id: opaqueId('session_id') });
