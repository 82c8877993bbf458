/**
 * Where an OAuth client starts (docs/OAUTH.md, "Discovery"): the authorization server's
 * metadata (RFC 8414) and each protected resource's (RFC 9728): the API's at
 * `/.well-known/oauth-protected-resource`, `/mcp`'s at
 * `/.well-known/oauth-protected-resource/mcp`. Public documents, readable from any
 * origin (an app in a browser reads them first).
 */
import { type Context, Hono } from 'hono';
import { apiResource, mcpResource } from '../middleware/bearer';
import { operationId } from '../observability/operation-id';
import { PRESET_NAMES } from '../tenants/scopes';
import type { HonoEnv } from '../types/context';
import { issuerOf, scopesSupported } from './server';

export const PUBLIC_CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'GET, POST, OPTIONS',
  'Access-Control-Allow-Headers': 'content-type, authorization, mcp-protocol-version',
  'Access-Control-Max-Age': '600',
} as const;

const CACHED = { 'Cache-Control': 'public, max-age=300', ...PUBLIC_CORS };

export function metadataRoutes(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();
  app.get('/.well-known/oauth-authorization-server', operationId('oauth.metadata'), (c) =>
    c.json(authorizationServer(c), 200, CACHED),
  );
  app.get('/.well-known/oauth-protected-resource', operationId('oauth.metadata'), (c) =>
    c.json(protectedResource(c, apiResource(c), 'Agent Platform gateway API'), 200, CACHED),
  );
  app.get('/.well-known/oauth-protected-resource/mcp', operationId('oauth.metadata'), (c) =>
    c.json(protectedResource(c, mcpResource(c), 'Agent Platform gateway MCP'), 200, CACHED),
  );
  app.options('/.well-known/*', (c) => c.body(null, 204, PUBLIC_CORS));
  return app;
}

function authorizationServer(c: Context<HonoEnv>) {
  const issuer = issuerOf(c);
  const registration = c.get('settings').OAUTH_REGISTRATION === 'open';
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/oauth/token`,
    ...(registration ? { registration_endpoint: `${issuer}/oauth/register` } : {}),
    revocation_endpoint: `${issuer}/oauth/revoke`,
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    revocation_endpoint_auth_methods_supported: ['none'],
    scopes_supported: scopesSupported(c),
    authorization_response_iss_parameter_supported: true,
    client_id_metadata_document_supported: false,
    service_documentation: `${issuer}/docs`,
  };
}

function protectedResource(c: Context<HonoEnv>, resource: string, name: string) {
  return {
    resource,
    resource_name: name,
    authorization_servers: [issuerOf(c)],
    // What a client asks for when a challenge names no scope: the presets.
    scopes_supported: PRESET_NAMES,
    bearer_methods_supported: ['header'],
    resource_documentation: `${issuerOf(c)}/docs`,
  };
}
