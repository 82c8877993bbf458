/**
 * `POST /auth/browser-token`: a tenant's backend exchanges its own token for
 * a short-lived browser token bound to one origin and a subset of its scopes.
 */
import { Hono } from 'hono';
import { GatewayError, invalidField, ok } from '../errors';
import { notFromBrowser, tenantAuth } from '../middleware/auth';
import { tenantLimits } from '../middleware/limits';
import { validated } from '../middleware/validate';
import { operationId } from '../observability/operation-id';
import { catalogOf } from '../operations/catalog';
import { BROWSER_TOKEN_MIN_TTL_S, signBrowserToken } from '../tenants/browser-token';
import { keyRing } from '../tenants/crypto';
import { expandScopes, hasScope, isExplicitScope, scopesOf, USAGE_SCOPE } from '../tenants/scopes';
import { randomBase62 } from '../tenants/token';
import type { HonoEnv } from '../types/context';
import { mintBody } from './schemas';

/** Browser tokens never see platform secrets nor rotate, whatever the minting token may. */
const isBrowserScope = (scope: string) => !isExplicitScope(scope);
/** What a browser gets unasked: no platform secrets, and not the tenant's usage and limits. */
const isDefaultBrowserScope = (scope: string) => isBrowserScope(scope) && scope !== USAGE_SCOPE;

export function browserTokenRoutes(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();
  app.post(
    '/auth/browser-token',
    operationId('auth.browser_token'),
    tenantAuth(),
    notFromBrowser(() => new GatewayError('BROWSER_TOKEN_CANNOT_MINT')),
    // Counted before the body is read: a flood of bad bodies still spends the tenant's limits.
    tenantLimits('auth', () => 1),
    validated('json', mintBody),
    async (c) => {
      const parent = c.get('token');
      const { origin, scopes: asked, ttl_s } = c.req.valid('json');
      if (!(c.get('tenant').cors_origins ?? []).includes(origin)) {
        throw new GatewayError('ORIGIN_NOT_ALLOWED', {
          message: `Origin ${origin} is not among this tenant's cors_origins`,
        });
      }
      // By default a browser gets the minting token's scopes, less API keys and usage; its
      // presets are listed out over today's groups (a browser token lives minutes).
      const groups = catalogOf(c.get('settings')).groups;
      const scopes = asked
        ? expandScopes(asked, groups)
        : {
            scopes: scopesOf(groups).filter(
              (s) => isDefaultBrowserScope(s) && hasScope(parent.scopes, s),
            ),
            unknown: [],
          };
      if (scopes.unknown.length > 0) {
        throw invalidField('body', 'scopes', `Unknown scope ${scopes.unknown.join(', ')}`);
      }
      // Presets such as `full` include API key scopes: a browser simply does not get them.
      const granted = scopes.scopes.filter(isBrowserScope);
      if (granted.length === 0) {
        throw invalidField(
          'body',
          'scopes',
          'Browser tokens cannot have API key scopes nor token:rotate; ask for others',
        );
      }
      const beyond = granted.filter((s) => !hasScope(parent.scopes, s));
      if (beyond.length > 0) {
        const lacking = beyond.join(', ');
        throw new GatewayError('SCOPE_REQUIRED', {
          message: `A browser token cannot get scopes its minting token lacks: ${lacking}`,
          details: { scope: beyond[0] },
        });
      }

      const parentEnd = parent.expires_at ? Date.parse(parent.expires_at) : Infinity;
      if (parentEnd - Date.now() < BROWSER_TOKEN_MIN_TTL_S * 1000) {
        throw new GatewayError('CONFLICT', {
          message: `The minting token expires within ${BROWSER_TOKEN_MIN_TTL_S} s: rotate it first`,
        });
      }
      const exp = Math.floor(Math.min(Date.now() + ttl_s * 1000, parentEnd) / 1000);
      const token = await signBrowserToken(await keyRing(c.get('settings').KEY_ENCRYPTION_KEY), {
        ten: c.get('tenant').id,
        tok: parent.id,
        org: origin,
        scp: granted,
        exp,
        prt: `b${randomBase62(10)}`,
      });
      return c.json(
        ok({ token, origin, scopes: granted, expires_at: new Date(exp * 1000).toISOString() }),
        201,
      );
    },
  );
  return app;
}
