/**
 * `GET /oauth/authorize` (RFC 6749 4.1.1 with OAuth 2.1's rules; docs/OAUTH.md, "The
 * flow"). It checks the request, then sends the partner to the portal's consent page
 * (`/portal/#authorize=<request>`, the checked request signed by the gateway) to approve
 * or deny it there (oauth/consent.ts).
 *
 * Until the client and its redirect URI are known good, a refusal is this answer itself
 * (400, never a redirect: RFC 6749 4.1.2.1, RFC 9700 4.11, no open redirect). After
 * that, for a client the operator registered, a refusal goes back to that exact
 * registered URI with `error`, `state` and `iss` (RFC 9207): a request without PKCE, with
 * `plain` (S256 only), another response type, an unknown scope or resource. A client
 * that registered itself gets the same refusals here instead: anyone can register a site
 * to bounce people to, and the gateway redirects to it only once a partner approved or
 * denied it on the consent page, having seen where the answer goes.
 */
import { type Context, Hono } from 'hono';
import { ERRORS, type ErrorKind, GatewayError } from '../errors';
import { operationId } from '../observability/operation-id';
import { keyRing } from '../tenants/crypto';
import { signRequest } from '../tenants/oauth-secret';
import type { HonoEnv } from '../types/context';
import { knownClient } from './clients';
import { type Params, required, uniqueParams } from './params';
import { type AuthorizationRequest, redirectWith } from './request';
import { issuerOf, REQUEST_TTL_MS, resourceNamed, scopesAsked } from './server';

/** Longest `state` carried back (docs/BOUNDS.md). */
export const STATE_MAX_CHARS = 1024;
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export function authorizeRoutes(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();
  app.get('/oauth/authorize', operationId('oauth.authorize'), async (c) => {
    const params = uniqueParams(new URL(c.req.url).searchParams);
    const client = await knownClient(c, params);
    const redirectUri = required(params, 'redirect_uri');
    if (!client.redirect_uris.includes(redirectUri)) {
      throw new GatewayError('OAUTH_INVALID_REQUEST', {
        message: 'redirect_uri is not one this client registered (it must match exactly)',
      });
    }
    const state = params.get('state');
    const back = (kind: ErrorKind, message: string) =>
      c.redirect(
        redirectWith(redirectUri, {
          error: ERRORS[kind].msg,
          error_description: message,
          ...(state !== undefined ? { state: state.slice(0, STATE_MAX_CHARS) } : {}),
          iss: issuerOf(c),
        }),
        302,
      );
    const checked = checkRequest(c, params);
    // A client that registered itself could have named any site: the gateway's own answer,
    // never a bounce to it (RFC 9700 4.11.2). An operator's client gets its error back.
    if (checked instanceof GatewayError) {
      if (client.kind === 'operator') return back(checked.kind, checked.message);
      throw checked;
    }
    const request: AuthorizationRequest = {
      cid: client.client_id,
      ru: redirectUri,
      cc: checked.challenge,
      ...(state !== undefined ? { st: state } : {}),
      sc: checked.scopes,
      res: checked.resource,
      exp: Date.now() + REQUEST_TTL_MS,
    };
    const signed = await signRequest(await keyRing(c.get('settings').KEY_ENCRYPTION_KEY), request);
    c.header('Cache-Control', 'no-store');
    c.header('Referrer-Policy', 'no-referrer');
    return c.redirect(`${issuerOf(c)}/portal/#authorize=${signed}`, 302);
  });
  return app;
}

interface Checked {
  challenge: string;
  scopes: string[];
  resource: string;
}

/** The rest of the request, checked; a refusal goes back to the client. */
function checkRequest(c: Context<HonoEnv>, params: Params): Checked | GatewayError {
  const refuse = (kind: ErrorKind, message: string) => new GatewayError(kind, { message });
  if (params.get('response_type') !== 'code') {
    return refuse('OAUTH_UNSUPPORTED_RESPONSE_TYPE', 'response_type must be code');
  }
  const challenge = params.get('code_challenge');
  if (!challenge) return refuse('OAUTH_INVALID_REQUEST', 'PKCE is required: send code_challenge');
  if (params.get('code_challenge_method') !== 'S256') {
    return refuse('OAUTH_INVALID_REQUEST', 'code_challenge_method must be S256 (plain is refused)');
  }
  if (!CHALLENGE.test(challenge)) {
    return refuse('OAUTH_INVALID_REQUEST', 'code_challenge must be BASE64URL(SHA-256(verifier))');
  }
  if ((params.get('state')?.length ?? 0) > STATE_MAX_CHARS) {
    return refuse('OAUTH_INVALID_REQUEST', `state is at most ${STATE_MAX_CHARS} characters`);
  }
  // No resource named: the grant serves every resource of the gateway (its API and /mcp).
  const named = params.get('resource');
  const resource = named === undefined ? '' : resourceNamed(c, named);
  if (resource === null) {
    return refuse('OAUTH_INVALID_TARGET', 'resource must be this gateway or its /mcp');
  }
  try {
    return { challenge, scopes: scopesAsked(c, params.get('scope')), resource };
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
}
