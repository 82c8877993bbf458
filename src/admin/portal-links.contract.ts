/** The operator API's partner portal links (docs/CONSOLE.md, "Partner portal"). */
import * as z from 'zod';
import type { PortalLink } from '../types/wire';
import { instant, tenantParams } from './fields';
import { adminOperation, answerOf } from './operation';

/** Longest and default life of a portal link (docs/BOUNDS.md). */
export const PORTAL_LINK_MAX_S = 3600;
export const PORTAL_LINK_DEFAULT_S = 900;

export const portalLinkBody = z.strictObject({
  expires_in_s: z.number().int().min(60).max(PORTAL_LINK_MAX_S).default(PORTAL_LINK_DEFAULT_S),
  /**
   * The link also lets the partner manage its apps and keys (`partner:manage`: approve
   * apps through OAuth, revoke them, make and revoke its own keys; docs/OAUTH.md).
   */
  manage: z.boolean().default(false),
});

export const createPortalLink = adminOperation({
  method: 'post',
  path: '/admin/tenants/:id/portal-links',
  role: 'admin',
  audit: 'portal_link.created',
  summary:
    'A partner portal link: a usage:read token (with manage, partner:manage too) for at most an hour, in the URL fragment',
  params: tenantParams,
  body: portalLinkBody,
  status: 201,
  answer: () =>
    answerOf<PortalLink>()(
      z.object({
        url: z.string(),
        token_id: z.string(),
        scopes: z.array(z.string()),
        expires_at: instant(),
      }),
    ),
});
