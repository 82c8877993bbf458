/**
 * `POST /oauth/register`: dynamic client registration (RFC 7591; docs/OAUTH.md,
 * "Clients"). Anyone may register a public client (no secret: PKCE S256 protects its
 * codes), so it is bounded: the operator can close it fleet-wide (OAUTH_REGISTRATION=off)
 * and a tenant can refuse such clients at consent; a registration is at most
 * REGISTRATION_MAX_BYTES, its redirect URIs REDIRECT_URIS_MAX; each client network may
 * register PREAUTH_LIMITER's 60 a minute; and at most OAUTH_CLIENTS_MAX clients exist at
 * once (unapproved ones go after a day). Readable from any origin: an app in a browser
 * registers itself.
 */
import { type Context, Hono } from 'hono';
import { decodeUtf8, readCapped } from '../bytes';
import { GatewayError } from '../errors';
import { countAgainstClient, isThrottled } from '../middleware/preauth';
import { oauthClients } from '../objects/clients/oauth-clients';
import { operationId } from '../observability/operation-id';
import type { HonoEnv } from '../types/context';
import type { OAuthClient } from '../types/wire';
import {
  CLIENT_NAME_MAX_CHARS,
  REDIRECT_URIS_MAX,
  REGISTRATION_MAX_BYTES,
  redirectUriProblem,
} from './client-metadata';
import { PUBLIC_CORS } from './metadata';

const GRANT_TYPES = ['authorization_code', 'refresh_token'];

export function registerRoutes(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();
  app.options('/oauth/register', (c) => c.body(null, 204, PUBLIC_CORS));
  app.post('/oauth/register', operationId('oauth.register'), async (c) => {
    c.header('Access-Control-Allow-Origin', '*');
    const settings = c.get('settings');
    if (settings.OAUTH_REGISTRATION === 'off') {
      throw new GatewayError('OAUTH_ACCESS_DENIED', {
        message: 'Dynamic client registration is off on this gateway: ask its operator',
      });
    }
    await refuseFloods(c);
    const metadata = await registration(c);
    const registered = await oauthClients(c.env).register(
      { ...metadata, kind: 'dynamic', created_by: null },
      settings.OAUTH_CLIENTS_MAX,
      Date.now(),
    );
    if (registered.kind === 'full') {
      throw new GatewayError('OAUTH_TEMPORARILY_UNAVAILABLE', {
        message: 'The gateway holds as many clients as it may (OAUTH_CLIENTS_MAX); try later',
        headers: { 'Retry-After': '3600' },
      });
    }
    c.header('Cache-Control', 'no-store');
    return c.json(clientInformation(registered.client), 201);
  });
  return app;
}

/** RFC 7591 3.2.1: what was registered, as the client will use it. */
export function clientInformation(client: OAuthClient) {
  return {
    client_id: client.client_id,
    client_id_issued_at: Math.floor(Date.parse(client.created_at) / 1000),
    client_name: client.client_name,
    redirect_uris: client.redirect_uris,
    grant_types: GRANT_TYPES,
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}

/** Each registration counts against its client network; past the limit, a 429. */
async function refuseFloods(c: Context<HonoEnv>): Promise<void> {
  const flood = () =>
    new GatewayError('OAUTH_TEMPORARILY_UNAVAILABLE', {
      message: 'Too many client registrations from this address; retry in 60 s',
      headers: { 'Retry-After': '60' },
    });
  if (isThrottled(c, 'oauth-register')) throw flood();
  if ((await countAgainstClient(c, 'oauth-register')) !== null) throw flood();
}

/** The registration's metadata that the gateway keeps; the rest is ignored (RFC 7591 2). */
async function registration(
  c: Context<HonoEnv>,
): Promise<{ client_name: string; redirect_uris: string[] }> {
  const badMetadata = (message: string) =>
    new GatewayError('OAUTH_INVALID_CLIENT_METADATA', { message });
  const type = c.req.header('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') throw badMetadata('Send the metadata as application/json');
  const tooLarge = () => badMetadata(`A registration is at most ${REGISTRATION_MAX_BYTES} bytes`);
  if (Number(c.req.header('content-length') ?? 0) > REGISTRATION_MAX_BYTES) throw tooLarge();
  let body: unknown;
  try {
    body = JSON.parse(
      decodeUtf8(await readCapped(c.req.raw.body, REGISTRATION_MAX_BYTES, tooLarge)),
    );
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    throw badMetadata('The registration is not valid JSON');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw badMetadata('The registration is a JSON object');
  }
  const m = body as Record<string, unknown>;
  const uris = m.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > REDIRECT_URIS_MAX) {
    throw new GatewayError('OAUTH_INVALID_REDIRECT_URI', {
      message: `redirect_uris is a list of 1 to ${REDIRECT_URIS_MAX} URIs`,
    });
  }
  for (const uri of uris) {
    const problem = typeof uri === 'string' ? redirectUriProblem(uri) : 'a URI is a string';
    if (problem) throw new GatewayError('OAUTH_INVALID_REDIRECT_URI', { message: problem });
  }
  const method = m.token_endpoint_auth_method;
  if (method !== undefined && method !== 'none') {
    throw badMetadata('Only public clients register here (token_endpoint_auth_method none)');
  }
  const grants = m.grant_types ?? ['authorization_code'];
  if (!Array.isArray(grants) || grants.some((g) => !GRANT_TYPES.includes(g))) {
    throw badMetadata(`grant_types may hold ${GRANT_TYPES.join(' and ')}`);
  }
  const responses = m.response_types ?? ['code'];
  if (!Array.isArray(responses) || responses.some((r) => r !== 'code')) {
    throw badMetadata('response_types may hold code');
  }
  return { client_name: clientName(m.client_name), redirect_uris: [...new Set(uris)] };
}

function clientName(name: unknown): string {
  if (name === undefined) return 'Unnamed app';
  if (
    typeof name !== 'string' ||
    name.trim() === '' ||
    name.length > CLIENT_NAME_MAX_CHARS ||
    /[\p{Cc}\p{Cf}]/u.test(name)
  ) {
    throw new GatewayError('OAUTH_INVALID_CLIENT_METADATA', {
      message: `client_name is 1 to ${CLIENT_NAME_MAX_CHARS} characters, no control or format characters`,
    });
  }
  return name.trim();
}
