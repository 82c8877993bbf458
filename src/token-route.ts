/**
 * A token's own view of itself, for the partner portal (docs/CONSOLE.md,
 * "Partner portal"): `GET /token` (any token: its tenant's id and name, its
 * own id, scopes, expiry and own limits, and the meters as the TenantGuard
 * counts them; a self-service read, docs/LIMITS.md "Self-service reads") and
 * `POST /token/rotate` (scope token:rotate: a successor, shown once). Both
 * read only the calling token: no path, query or body names a tenant or a
 * token, so no request can reach another's.
 */
import { Hono } from 'hono';
import { guardFor } from './admin/common';
import { decideRotation } from './admin/rotation';
import { GatewayError, ok } from './errors';
import { notFromBrowser, requireScope, tenantAuth } from './middleware/auth';
import { tenantLimits } from './middleware/limits';
import { validated } from './middleware/validate';
import { operationId } from './observability/operation-id';
import { BROWSER_TOKEN_PREFIX } from './tenants/browser-token';
import { rotateBody } from './tenants/rotate-body';
import { hasScope, ROTATE_SCOPE } from './tenants/scopes';
import { memoizedStores } from './tenants/stores';
import type { HonoEnv } from './types/context';
import type { OwnToken, RotatedToken } from './types/wire';

const PRIVATE = { 'Cache-Control': 'private, no-store' };

/** A browser token is a view of its minting token: it never makes successors. */
const cannotRotate = () =>
  new GatewayError('SCOPE_REQUIRED', {
    message: `A browser token cannot rotate; it lacks ${ROTATE_SCOPE}`,
    details: { scope: ROTATE_SCOPE },
  });

export function ownTokenRoutes(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();
  app.get(
    '/token',
    operationId('token.own'),
    tenantAuth(),
    // A self-service read: its own small meter, never the tenant's policies or quotas.
    tenantLimits('self', () => 1),
    async (c) => {
      const tenant = c.get('tenant');
      const token = c.get('token');
      const browser = token.prefix === BROWSER_TOKEN_PREFIX;
      const standing = await guardFor(c.env, tenant.id)
        .limits()
        .usage(Date.now(), c.get('settings').DEFAULT_LIMITS, token.id);
      return c.json(
        ok<OwnToken>({
          tenant: { id: tenant.id, name: tenant.name },
          token: {
            id: token.id,
            name: token.name,
            prefix: token.prefix,
            last4: token.last4,
            scopes: token.scopes,
            created_at: token.created_at || null,
            expires_at: token.expires_at,
            browser,
          },
          limits: browser ? null : (standing.token_limits ?? null),
          // The tenant's meters and the token's own, as the TenantGuard counts them now.
          meters: standing.meters,
          can_rotate: !browser && hasScope(token.scopes, ROTATE_SCOPE),
        }),
        200,
        PRIVATE,
      );
    },
  );

  app.post(
    '/token/rotate',
    operationId('token.rotate'),
    tenantAuth(),
    notFromBrowser(cannotRotate),
    requireScope(ROTATE_SCOPE),
    // A security action: on the self-service meter, never refused for a spent data quota.
    tenantLimits('self', () => 1),
    validated('json', rotateBody),
    async (c) => {
      const tenantId = c.get('tenant').id;
      const tokenId = c.get('token').id;
      // The TenantGuard decides it against the token's state there, not what KV said.
      const stores = await memoizedStores(c.env, c.get('settings'));
      const { issued, oldUntil } = await decideRotation(
        c,
        stores,
        tenantId,
        tokenId,
        c.req.valid('json'),
        `token:${tokenId}`,
      );
      return c.json(
        ok<RotatedToken>({
          ...issued.record,
          token: issued.token,
          old_token: { id: tokenId, expires_at: oldUntil },
        }),
        201,
        PRIVATE,
      );
    },
  );
  return app;
}
