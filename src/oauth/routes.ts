/**
 * The gateway as an OAuth 2.1 authorization server (docs/OAUTH.md): discovery, dynamic
 * registration, authorization, the partner's consent, tokens and revocation. Mounted
 * before the tenants' CORS: these endpoints answer browsers by their own rules (public
 * documents and registration for any origin; tokens for a client's own origins).
 *
 * @example app.route('/', oauthRoutes())
 */
import { Hono } from 'hono';
import type { HonoEnv } from '../types/context';
import { authorizeRoutes } from './authorize';
import { consentRoutes } from './consent';
import { metadataRoutes } from './metadata';
import { registerRoutes } from './register';
import { revokeRoutes } from './revoke';
import { tokenRoutes } from './token';

export function oauthRoutes(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();
  for (const routes of [
    metadataRoutes(),
    registerRoutes(),
    authorizeRoutes(),
    consentRoutes(),
    tokenRoutes(),
    revokeRoutes(),
  ]) {
    app.route('/', routes);
  }
  return app;
}
