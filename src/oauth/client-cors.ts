/**
 * CORS of the token and revocation endpoints (docs/OAUTH.md, "Browser apps"): a browser
 * app reads their answers only from an origin of one of its own registered redirect URIs.
 * A preflight names no client, so it is answered for any origin: it lets nothing through
 * by itself, the answer to the request then carries the grant or not.
 */
import type { Context } from 'hono';
import { webOriginOf } from '../tenants/redirect-uri';
import type { HonoEnv } from '../types/context';
import type { OAuthClient } from '../types/wire';

const ALLOW_HEADERS = 'content-type';
const EXPOSE_HEADERS = 'X-Request-ID, Retry-After';

/** OPTIONS of a client endpoint. */
export function preflight(c: Context<HonoEnv>): Response {
  const origin = c.req.header('origin');
  if (!origin) return c.body(null, 204);
  return c.body(null, 204, {
    'Access-Control-Allow-Origin': origin,
    'Access-Control-Allow-Methods': 'POST',
    'Access-Control-Allow-Headers': ALLOW_HEADERS,
    'Access-Control-Max-Age': '600',
    Vary: 'Origin',
  });
}

/** Lets the calling page read the answer when it is at one of the client's own origins. */
export function clientCors(c: Context<HonoEnv>, client: OAuthClient): void {
  const origin = c.req.header('origin');
  c.header('Vary', 'Origin');
  if (!origin || !originsOf(client).includes(origin)) return;
  c.header('Access-Control-Allow-Origin', origin);
  c.header('Access-Control-Expose-Headers', EXPOSE_HEADERS);
}

function originsOf(client: OAuthClient): string[] {
  return client.redirect_uris.flatMap((uri) => webOriginOf(uri) ?? []);
}
