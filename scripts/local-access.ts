/**
 * A local stand-in for Cloudflare Access, on loopback, for `npm start` and the
 * tests: it publishes an RS256 key set at /cdn-cgi/access/certs (as a team
 * domain does) and signs Access-shaped JWTs (aud, iss, email, iat, nbf, exp)
 * for a local admin and a local viewer. The gateway verifies them with the
 * same code as in production; only ACCESS_TEAM_DOMAIN points here, which the
 * gateway allows for a loopback http origin only with ACCESS_LOCAL_ISSUER=allow.
 *
 *   GET  /cdn-cgi/access/certs      the published keys (fetches are counted)
 *   GET  /login?as=admin|viewer     sets the CF_Authorization cookie (a cookie
 *                                   is per host, not per port, so the gateway on
 *                                   127.0.0.1 gets it) and redirects to `to`
 *   POST /__access/mint             a JWT for tests: {email, groups, aud, iss,
 *                                   exp_in_s, nbf_in_s, key: published|other}
 *   GET  /__access/stats            {certs_fetches}
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import { Hono } from 'hono';
import { setCookie } from 'hono/cookie';
import { sign } from 'hono/utils/jwt/jwt';

export const LOCAL_ACCESS_AUD = 'local-gateway-console';
export const LOCAL_ADMIN_EMAIL = 'admin@operators.local';
export const LOCAL_VIEWER_EMAIL = 'viewer@operators.local';
/** The ACCESS_ROLES that `npm start` and the tests use with this server. */
export const LOCAL_ACCESS_ROLES = { admin: [LOCAL_ADMIN_EMAIL], viewer: [LOCAL_VIEWER_EMAIL] };
/** Access sessions last 24 h by default; the local ones last 8 h. */
const SESSION_S = 8 * 3600;

export interface MintRequest {
  email?: string;
  groups?: string[];
  aud?: string;
  iss?: string;
  exp_in_s?: number;
  nbf_in_s?: number;
  key?: 'published' | 'other';
}

export interface LocalAccess {
  /** Use as ACCESS_TEAM_DOMAIN. */
  url: string;
  /** The gateway settings that trust this server: team domain, AUD, roles, local issuer. */
  vars: Record<string, string>;
  mint(req?: MintRequest): Promise<string>;
  /** Where a browser signs in as `role` and lands on `to` (a loopback URL). */
  loginUrl(role: 'admin' | 'viewer', to: string): string;
  close(): Promise<void>;
}

function rsaKey(kid: string) {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const meta = { kid, alg: 'RS256', use: 'sig' };
  return {
    privateJwk: { ...privateKey.export({ format: 'jwk' }), ...meta },
    publicJwk: { ...publicKey.export({ format: 'jwk' }), ...meta },
  };
}

export async function startLocalAccess(opts: { port?: number } = {}): Promise<LocalAccess> {
  const published = rsaKey(`local-${randomBytes(6).toString('hex')}`);
  // Never published: a token it signs is "signed by another key".
  const other = rsaKey(`other-${randomBytes(6).toString('hex')}`);
  let certsFetches = 0;
  let url = '';

  const mint = async (req: MintRequest = {}) => {
    const now = Math.floor(Date.now() / 1000);
    const payload = {
      aud: [req.aud ?? LOCAL_ACCESS_AUD],
      iss: req.iss ?? url,
      email: req.email ?? LOCAL_ADMIN_EMAIL,
      sub: randomBytes(8).toString('hex'),
      type: 'app',
      iat: now + Math.min(0, req.nbf_in_s ?? 0),
      nbf: now + (req.nbf_in_s ?? 0),
      exp: now + (req.exp_in_s ?? SESSION_S),
      ...(req.groups ? { groups: req.groups } : {}),
    };
    const key = req.key === 'other' ? other : published;
    return sign(payload, key.privateJwk as never, 'RS256');
  };

  const app = new Hono();
  app.get('/cdn-cgi/access/certs', (c) => {
    certsFetches++;
    return c.json({ keys: [published.publicJwk], public_cert: {}, public_certs: [] });
  });
  app.get('/login', async (c) => {
    const role = c.req.query('as') === 'viewer' ? 'viewer' : 'admin';
    const to = c.req.query('to') ?? '/';
    // Only back to a loopback page: no open redirect, even locally.
    if (!/^http:\/\/(127\.0\.0\.1|localhost)(:\d+)?\//.test(to)) return c.text('bad to', 400);
    const email = role === 'viewer' ? LOCAL_VIEWER_EMAIL : LOCAL_ADMIN_EMAIL;
    setCookie(c, 'CF_Authorization', await mint({ email }), {
      path: '/',
      httpOnly: true,
      sameSite: 'Lax',
      maxAge: SESSION_S,
    });
    return c.redirect(to, 302);
  });
  app.post('/__access/mint', async (c) => c.text(await mint(await c.req.json<MintRequest>())));
  app.get('/__access/stats', (c) => c.json({ certs_fetches: certsFetches }));

  const server = createAdaptorServer({ fetch: app.fetch }) as Server;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    vars: {
      ACCESS_TEAM_DOMAIN: url,
      ACCESS_AUD: LOCAL_ACCESS_AUD,
      ACCESS_ROLES: JSON.stringify(LOCAL_ACCESS_ROLES),
      ACCESS_LOCAL_ISSUER: 'allow',
    },
    mint,
    loginUrl: (role, to) => `${url}/login?as=${role}&to=${encodeURIComponent(to)}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
