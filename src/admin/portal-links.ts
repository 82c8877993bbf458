/**
 * `POST /admin/tenants/:id/portal-links`: a link an operator hands a partner
 * to open the partner portal without typing a token (docs/CONSOLE.md,
 * "Partner portal"). The link carries a new token of the tenant with the one
 * scope `usage:read`, ending within an hour, on the gateway's public origin
 * (PORTAL_ORIGIN; refused without it); the token rides in the URL's
 * fragment (`#token=`), which browsers never send, so it reaches no server
 * log, and the portal takes it out of the address bar at once. The token is
 * an ordinary one: listed with the tenant's tokens, revocable by its id.
 */
import { Hono } from 'hono';
import * as z from 'zod';
import { GatewayError } from '../errors';
import { validated } from '../middleware/validate';
import { USAGE_SCOPE } from '../tenants/scopes';
import type { HonoEnv } from '../types/context';
import type { PortalLink } from '../types/wire';
import { adminStores, audit, existingTenant, issueToken, ok, tenantParams } from './common';

/** Longest and default life of a portal link (docs/BOUNDS.md). */
export const PORTAL_LINK_MAX_S = 3600;
export const PORTAL_LINK_DEFAULT_S = 900;
export const PORTAL_LINK_TOKEN_NAME = 'portal-link';

export const portalLinkBody = z.strictObject({
  expires_in_s: z.number().int().min(60).max(PORTAL_LINK_MAX_S).default(PORTAL_LINK_DEFAULT_S),
});

/** Where the partner portal lives on the gateway's own origin (Workers static assets). */
export const PORTAL_PATH = '/portal/';

export function portalLinkRoutes(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();
  app.post(
    '/:id/portal-links',
    validated('param', tenantParams),
    validated('json', portalLinkBody),
    async (c) => {
      const { id } = c.req.valid('param');
      const { expires_in_s } = c.req.valid('json');
      // The link's origin comes from settings only, never the request's Host, which
      // whoever calls can name (an operator tricked into a link to another site).
      const origin = c.get('settings').PORTAL_ORIGIN;
      if (!origin) {
        throw new GatewayError('MISCONFIGURED', {
          message:
            "Portal links need PORTAL_ORIGIN: set it to the gateway's public origin " +
            '(e.g. https://gw.example.com); no link was made',
        });
      }
      const stores = await adminStores(c);
      await existingTenant(stores, id);
      const expiresAt = new Date(Date.now() + expires_in_s * 1000).toISOString();
      const spec = { name: PORTAL_LINK_TOKEN_NAME, scopes: [USAGE_SCOPE], expires_at: expiresAt };
      const issued = await issueToken(c, stores, id, spec, null);
      await audit(c, 'portal_link.created', {
        tenant_id: id,
        token_id: issued.record.id,
        detail: { expires_at: expiresAt },
      });
      const url = `${origin}${PORTAL_PATH}#token=${issued.token}`;
      return c.json(
        ok<PortalLink>({
          url,
          token_id: issued.record.id,
          scopes: issued.record.scopes,
          expires_at: expiresAt,
        }),
        201,
        { 'Cache-Control': 'no-store' },
      );
    },
  );
  return app;
}
