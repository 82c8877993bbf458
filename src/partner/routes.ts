/**
 * The partner's own apps and keys, for the partner portal (docs/OAUTH.md, "In the
 * portal"), with the partner's own token (scope `partner:manage`, never a browser token):
 *
 * - `GET /partner/apps`: the apps it approved (OAuth grants); `DELETE /partner/apps/{id}`
 *   ends one (its token is refused everywhere within LEASE_MAX_MS);
 * - `GET /partner/keys`: the keys it made, with their last use, and what it may make;
 *   `POST /partner/keys` makes one (shown once), named, scoped within what the operator
 *   lets the tenant grant, limited within the tenant's limits, up to the operator's count;
 *   `DELETE /partner/keys/{id}` revokes one.
 *
 * Every call is the caller's tenant's only: an id of another tenant's, or of a token the
 * partner did not make, is 404. Each change is audited with the partner's token as actor.
 */
import { type Context, Hono } from 'hono';
import { createMiddleware } from 'hono/factory';
import * as z from 'zod';
import { auditContext } from '../admin/common';
import { GatewayError, ok } from '../errors';
import { isolateAdmission } from '../limits/admission';
import { tokenLimitsSchema } from '../metering/policy';
import { requireScope, tenantAuth } from '../middleware/auth';
import { tenantLimits } from '../middleware/limits';
import { validated } from '../middleware/validate';
import { type GuardParts, guardFor } from '../objects/tenant/tenant-guard';
import type { AuditContext } from '../objects/tenant/tokens/token-registry';
import { operationId } from '../observability/operation-id';
import { catalogOf } from '../operations/catalog';
import { nameField } from '../operations/schemas';
import { BROWSER_TOKEN_PREFIX } from '../tenants/browser-token';
import { beyondTenant } from '../tenants/partner-access';
import { PARTNER_SCOPE } from '../tenants/scopes';
import { memoizedStores } from '../tenants/stores';
import type { HonoEnv } from '../types/context';
import type {
  CreatedPartnerKey,
  PartnerApp,
  PartnerKey,
  PartnerKeys,
  TokenListing,
} from '../types/wire';

const PRIVATE = { 'Cache-Control': 'private, no-store' };
/** Longest life of a partner's key (docs/BOUNDS.md). */
export const PARTNER_KEY_MAX_DAYS = 365;

const keyBody = z.strictObject({
  name: nameField('name', 64),
  scopes: z.array(z.string().max(64)).min(1).max(32),
  /** Days it works (absent: until revoked). */
  expires_in_days: z.number().int().min(1).max(PARTNER_KEY_MAX_DAYS).optional(),
  limits: tokenLimitsSchema.optional(),
});

const idParam = z.strictObject({ id: z.string().max(64) });

/** The partner's own token (never a browser token), allowed to manage its apps and keys. */
export const partnerToken = [
  tenantAuth(),
  createMiddleware<HonoEnv>(async function notFromBrowser(c, next) {
    if (c.get('token').prefix === BROWSER_TOKEN_PREFIX) {
      throw new GatewayError('SCOPE_REQUIRED', {
        message: `A browser token cannot manage apps or keys; it lacks ${PARTNER_SCOPE}`,
        details: { scope: PARTNER_SCOPE },
      });
    }
    await next();
  }),
  requireScope(PARTNER_SCOPE),
  // A self-service call: the token's own small meter, never the tenant's limits.
  tenantLimits('self', () => 1),
] as const;

export function partnerRoutes(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();

  app.get('/partner/apps', operationId('partner.apps'), ...partnerToken, async (c) => {
    const tenantId = c.get('tenant').id;
    const apps: PartnerApp[] = await guardFor(c.env, tenantId).grants().apps();
    return c.json(ok({ apps }), 200, PRIVATE);
  });

  revokeRoute(app, 'app', (grants, tenantId, id, ctx) =>
    grants.revokeGrant(tenantId, id, null, Date.now(), ctx),
  );

  app.get('/partner/keys', operationId('partner.keys'), ...partnerToken, async (c) => {
    const tenantId = c.get('tenant').id;
    const guard = guardFor(c.env, tenantId);
    const [tokens, access] = await Promise.all([
      guard.tokens().list(tenantId, Date.now()),
      guard.grants().access(),
    ]);
    return c.json(
      ok<PartnerKeys>({
        keys: tokens.flatMap((t) => (t.made_by ? [partnerKey(t, t.made_by)] : [])),
        max_keys: access.max_keys,
        grantable_scopes: access.grantable_scopes,
      }),
      200,
      PRIVATE,
    );
  });

  app.post(
    '/partner/keys',
    operationId('partner.key.create'),
    ...partnerToken,
    validated('json', keyBody),
    async (c) => {
      const tenantId = c.get('tenant').id;
      const body = c.req.valid('json');
      const settings = c.get('settings');
      const guard = guardFor(c.env, tenantId);
      const limits = body.limits ?? null;
      if (limits) {
        const usage = await guard.limits().usage(Date.now(), settings.DEFAULT_LIMITS);
        const beyond = beyondTenant(limits, usage.limits);
        if (beyond) {
          throw new GatewayError('VALIDATION_FAILED', {
            message: `A key's limits stay within the account's: ${beyond}`,
            details: { errors: [{ location: 'body', field: 'limits', message: beyond }] },
          });
        }
      }
      const stores = await memoizedStores(c.env, settings);
      const { token, ...minted } = await stores.tokens.mint();
      const now = Date.now();
      const expiresAt = body.expires_in_days
        ? new Date(now + body.expires_in_days * 86_400_000).toISOString()
        : null;
      const madeBy = `token:${c.get('token').id}`;
      const outcome = await guard.grants().createKey({
        tenantId,
        minted,
        name: body.name,
        scopes: body.scopes,
        expiresAt,
        limits,
        madeBy,
        groups: [...catalogOf(settings).groups],
        now,
        ctx: partnerContext(c),
      });
      if (outcome.kind === 'too_many') {
        throw new GatewayError('CONFLICT', {
          message: `You have ${outcome.max} working keys, as many as this account may: revoke one first`,
          details: { max_keys: outcome.max },
        });
      }
      if (outcome.kind === 'invalid_scope') {
        throw new GatewayError('SCOPE_REQUIRED', {
          message:
            outcome.unknown.length > 0
              ? `Unknown scope ${outcome.unknown[0]?.slice(0, 64)}`
              : `A key may hold only what this account may grant: ${outcome.allowed.join(', ')}`,
          details: { allowed: outcome.allowed },
        });
      }
      if (limits) isolateAdmission.forget(tenantId);
      const { record } = outcome.entry;
      const key = partnerKey({ ...record, limits, last_used_at: null }, madeBy);
      return c.json(ok<CreatedPartnerKey>({ ...key, token }), 201, PRIVATE);
    },
  );

  revokeRoute(app, 'key', (grants, tenantId, id, ctx) =>
    grants.revokeKey(tenantId, id, Date.now(), ctx),
  );
  return app;
}

/**
 * `DELETE /partner/{apps|keys}/:id`: the partner ends one of its own apps or keys, refused
 * everywhere within LEASE_MAX_MS (this isolate at once); 404 when it is none of its own.
 */
function revokeRoute(
  app: Hono<HonoEnv>,
  what: 'app' | 'key',
  revoke: (
    grants: ReturnType<GuardParts['grants']>,
    tenantId: string,
    id: string,
    ctx: AuditContext,
  ) => Promise<boolean>,
): void {
  app.delete(
    `/partner/${what}s/:id`,
    operationId(`partner.${what}.revoke`),
    ...partnerToken,
    validated('param', idParam),
    async (c) => {
      const tenantId = c.get('tenant').id;
      const { id } = c.req.valid('param');
      const grants = guardFor(c.env, tenantId).grants();
      if (!(await revoke(grants, tenantId, id, partnerContext(c)))) throw noSuch(what);
      isolateAdmission.forget(tenantId);
      return c.json(ok({ id, revoked: true }), 200, PRIVATE);
    },
  );
}

/** Audit entries of the partner's changes name its token. */
const partnerContext = (c: Context<HonoEnv>) => auditContext(c, `token:${c.get('token').id}`);

const noSuch = (what: string) =>
  new GatewayError('RESOURCE_NOT_FOUND', { message: `No such ${what} of yours` });

type KeyFields =
  | 'id'
  | 'name'
  | 'prefix'
  | 'last4'
  | 'scopes'
  | 'created_at'
  | 'expires_at'
  | 'revoked_at'
  | 'limits'
  | 'last_used_at';

function partnerKey(t: Pick<TokenListing, KeyFields>, madeBy: string): PartnerKey {
  return {
    id: t.id,
    name: t.name,
    prefix: t.prefix,
    last4: t.last4,
    scopes: t.scopes,
    created_at: t.created_at,
    expires_at: t.expires_at,
    revoked_at: t.revoked_at ?? null,
    made_by: madeBy,
    limits: t.limits,
    last_used_at: t.last_used_at,
  };
}
