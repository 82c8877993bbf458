/**
 * `POST /admin/tenants/:id/portal-links` (portal-links.contract.ts): a link an operator hands a partner
 * to open the partner portal without typing a token (docs/CONSOLE.md,
 * "Partner portal"). The link carries a new token of the tenant with the scope
 * `usage:read` (and with `manage`, `partner:manage`: docs/OAUTH.md), ending within an hour, on the gateway's public origin
 * (PORTAL_ORIGIN; refused without it); the token rides in the URL's
 * fragment (`#token=`), which browsers never send, so it reaches no server
 * log, and the portal takes it out of the address bar at once. The token is
 * an ordinary one: listed with the tenant's tokens, revocable by its id.
 */
import { GatewayError } from '../errors';
import { PARTNER_SCOPE, USAGE_SCOPE } from '../tenants/scopes';
import { adminStores, audit, existingTenant, mintToken } from './common';
import { type AdminApp, handle } from './handle';
import * as contract from './portal-links.contract';

export const PORTAL_LINK_TOKEN_NAME = 'portal-link';

/** Where the partner portal lives on the gateway's own origin (Workers static assets). */
export const PORTAL_PATH = '/portal/';

export function portalLinkRoutes(app: AdminApp): void {
  handle(app, contract.createPortalLink, async (c, op) => {
    const { id } = c.req.valid('param');
    const { expires_in_s, manage } = c.req.valid('json');
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
    const scopes = manage ? [USAGE_SCOPE, PARTNER_SCOPE] : [USAGE_SCOPE];
    const spec = { name: PORTAL_LINK_TOKEN_NAME, scopes, expires_at: expiresAt };
    const issued = await mintToken(c, stores, id, spec, null);
    await audit(c, op.audit, {
      tenant_id: id,
      token_id: issued.record.id,
      detail: { expires_at: expiresAt, scopes },
    });
    const url = `${origin}${PORTAL_PATH}#token=${issued.token}`;
    c.header('Cache-Control', 'no-store');
    return {
      url,
      token_id: issued.record.id,
      scopes: issued.record.scopes,
      expires_at: expiresAt,
    };
  });
}
