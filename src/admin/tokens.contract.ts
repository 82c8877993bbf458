/**
 * The operator API's tokens of a tenant: issue, list, rotate, revoke, and a token's own
 * limits. Secrets appear only in the answer that creates them.
 */
import * as z from 'zod';
import { tokenLimitsSchema } from '../metering/policy';
import { nameField } from '../operations/schemas';
import { rotateBody } from '../tenants/rotate-body';
import type { TokenRecord } from '../types/tenants';
import type { IssuedToken, RevokedToken, RotatedToken, TokenListing } from '../types/wire';
import { instant, tenantParams, tokenParams } from './fields';
import { adminOperation, answerOf } from './operation';

/** Longest lifetime an operator may give a token (docs/BOUNDS.md). */
export const MAX_TOKEN_LIFETIME_S = 5 * 365 * 86_400;

/** The body that describes a token to issue: name, scopes or presets, expiry, own limits. */
export const tokenSpecSchema = z.strictObject({
  name: nameField('name', 64).default('default'),
  scopes: z.array(z.string().max(64)).min(1).max(32).default(['full']),
  expires_at: z.iso
    .datetime({ offset: true, error: 'expires_at must be an ISO 8601 date-time with a zone' })
    .optional(),
  expires_in_s: z.number().int().min(60).max(MAX_TOKEN_LIFETIME_S).optional(),
  /** The token's own rate policies and quotas, counted besides its tenant's. */
  limits: tokenLimitsSchema.optional(),
});

export type TokenSpec = z.infer<typeof tokenSpecSchema>;

/** `?with_successors=true` revokes every token rotated from this one too. */
export const revokeQuery = z.strictObject({
  with_successors: z
    .enum(['true', 'false'], { error: 'with_successors must be true or false' })
    .default('false')
    .transform((v) => v === 'true'),
});

const tokenRecord = () =>
  answerOf<TokenRecord>()(
    z.object({
      id: z.string(),
      tenant_id: z.string(),
      name: z.string(),
      prefix: z.string(),
      last4: z.string(),
      scopes: z.array(z.string()),
      created_at: instant(),
      expires_at: instant().nullable(),
      tag_kid: z.string().optional(),
      revoked_at: instant().optional(),
      resource: z.string().optional(),
      grant: z
        .object({
          client_id: z.string(),
          client_name: z.string(),
          origin: z.string().nullable(),
          granted_by: z.string(),
          refresh_until: instant(),
        })
        .optional(),
      made_by: z.string().optional(),
    }),
  );

const tokenListing = () =>
  answerOf<TokenListing>()(
    tokenRecord().extend({
      family_id: z.string(),
      ancestor_id: z.string().nullable(),
      successor_id: z.string().nullable(),
      rotated_at: instant().nullable(),
      rotated_by: z.string().nullable(),
      limits: tokenLimitsSchema.nullable(),
      last_used_at: instant().nullable(),
    }),
  );

export const issueToken = adminOperation({
  method: 'post',
  path: '/admin/tenants/:id/tokens',
  role: 'admin',
  audit: 'token.issued',
  summary: 'Issue a token (shown once)',
  params: tenantParams,
  body: tokenSpecSchema,
  status: 201,
  answer: () =>
    answerOf<IssuedToken>()(
      tokenRecord().extend({ limits: tokenLimitsSchema.nullable(), token: z.string() }),
    ),
});

export const listTokens = adminOperation({
  method: 'get',
  path: '/admin/tenants/:id/tokens',
  role: 'viewer',
  summary: "List a tenant's tokens, oldest first, with their families (never the secrets)",
  params: tenantParams,
  answer: () => z.object({ tokens: z.array(tokenListing()) }),
});

export const rotateToken = adminOperation({
  method: 'post',
  path: '/admin/tenants/:id/tokens/:token_id/rotate',
  role: 'admin',
  audit: 'token.rotated',
  summary: 'Rotate a token with an overlap',
  description:
    'A family rotates one step at a time: 409 (40902) when the token already has a working ' +
    'successor (`data.successor_id`) or its own ancestor still works (`data.ancestor_id`).',
  params: tokenParams,
  body: rotateBody,
  status: 201,
  answer: () =>
    answerOf<RotatedToken>()(
      tokenRecord().extend({
        token: z.string(),
        old_token: z.object({ id: z.string(), expires_at: instant() }),
      }),
    ),
});

export const revokeToken = adminOperation({
  method: 'delete',
  path: '/admin/tenants/:id/tokens/:token_id',
  role: 'admin',
  audit: 'token.revoked',
  summary: 'Revoke a token at once (with_successors=true: every token rotated from it too)',
  params: tokenParams,
  query: revokeQuery,
  answer: () =>
    answerOf<RevokedToken>()(
      z.object({
        token_id: z.string(),
        revoked: z.literal(true),
        successors_revoked: z.array(z.string()),
      }),
    ),
});

export const setTokenLimits = adminOperation({
  method: 'put',
  path: '/admin/tenants/:id/tokens/:token_id/limits',
  role: 'admin',
  audit: 'token.limits_set',
  summary: "Set a token's own limits",
  params: tokenParams,
  body: tokenLimitsSchema,
  answer: () => z.object({ token_id: z.string(), limits: tokenLimitsSchema }),
});

export const removeTokenLimits = adminOperation({
  method: 'delete',
  path: '/admin/tenants/:id/tokens/:token_id/limits',
  role: 'admin',
  audit: 'token.limits_removed',
  summary: "Remove a token's own limits",
  params: tokenParams,
  answer: () => z.object({ token_id: z.string(), limits: z.null() }),
});
