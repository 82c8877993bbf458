/**
 * The partner contract on the wire: `GET /openapi.json` (everything without
 * a token, the token's own view with one) and `GET /docs`, an API reference
 * page. The page's script is Scalar's standalone bundle, served by Workers
 * static assets at /docs/scalar.js (scripts/docs-assets.ts puts it there), so
 * nothing loads from a CDN and the page runs under a strict CSP.
 */
import { Hono } from 'hono';
import { presentedToken, tenantAuth } from '../middleware/auth';
import { tenantLimits } from '../middleware/limits';
import { operationId } from '../observability/operation-id';
import { catalogOf } from '../operations/catalog';
import { BROWSER_TOKEN_PREFIX } from '../tenants/browser-token';
import type { HonoEnv } from '../types/context';
import { type OpenApiDocument, partnerDocument } from './document';

/**
 * No inline script, nothing from elsewhere; Scalar injects its styles, hence style 'unsafe-inline'.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Agent Platform gateway: API reference</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
</head>
<body>
<div id="gateway-docs"></div>
<script src="/docs/scalar.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

/**
 * A token the partner portal (/portal) left in this tab's sessionStorage
 * (ui/lib/session-token.ts): the page opens signed in with it. Never the URL.
 */
const DOCS_TOKEN_KEY = 'gateway-token';

// Scalar's own fonts, telemetry, agent and developer tools all call its servers: off.
const DOCS_INIT = `var portalToken = null;
try { portalToken = sessionStorage.getItem('${DOCS_TOKEN_KEY}'); } catch (e) {}
Scalar.createApiReference('#gateway-docs', {
  url: '/openapi.json',
  withDefaultFonts: false,
  telemetry: false,
  agent: { disabled: true },
  showDeveloperTools: 'never',
  documentDownloadType: 'json',
  defaultOpenAllTags: true,
  hideClientButton: true,
  authentication: {
    preferredSecurityScheme: 'gatewayToken',
    securitySchemes: portalToken ? { gatewayToken: { token: portalToken } } : {},
  },
});
`;

const pageHeaders = (type: string) => ({
  'content-type': type,
  'content-security-policy': DOCS_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'public, max-age=300',
});

/**
 * The gateway's own public URL as the server, so clients and importers call it, not a relative
 * path.
 */
const servedFrom = (url: string, doc: OpenApiDocument): OpenApiDocument => ({
  ...doc,
  servers: [{ url: new URL(url).origin }],
});

export function openApiRoutes(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();
  app.get(
    '/openapi.json',
    operationId('openapi'),
    async (c, next) => {
      // A token's own view is private to it; everyone else's is the same public document.
      c.header('Vary', 'Authorization, x-api-key');
      if (!presentedToken(c, false)) {
        return c.json(
          servedFrom(c.req.url, partnerDocument(catalogOf(c.get('settings')), null)),
          200,
          {
            'Cache-Control': 'public, max-age=300',
          },
        );
      }
      await next();
    },
    // With a token: its own view, after the token checks a call passes, its standing in
    // the TenantGuard (revocation) included, at cost 0: nothing is counted.
    tenantAuth(),
    tenantLimits('usage', () => 0),
    (c) => {
      const token = c.get('token');
      const browser = token.prefix === BROWSER_TOKEN_PREFIX;
      const view = partnerDocument(catalogOf(c.get('settings')), { scopes: token.scopes, browser });
      return c.json(servedFrom(c.req.url, view), 200, { 'Cache-Control': 'private, no-store' });
    },
  );
  app.get('/docs', operationId('docs'), (c) =>
    c.body(DOCS_PAGE, 200, pageHeaders('text/html; charset=utf-8')),
  );
  app.get('/docs/init.js', operationId('docs'), (c) =>
    c.body(DOCS_INIT, 200, pageHeaders('text/javascript; charset=utf-8')),
  );
  return app;
}
