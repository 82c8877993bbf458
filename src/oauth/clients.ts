/**
 * The registered client a request's `client_id` names: at /authorize (a 400: no redirect
 * until the client is known) and at /token and /revoke (a 401, `invalid_client`, where it
 * is also noted as used, for the sweep of idle clients).
 */
import type { Context } from 'hono';
import { GatewayError } from '../errors';
import { oauthClients } from '../objects/clients/oauth-clients';
import type { HonoEnv } from '../types/context';
import type { OAuthClient } from '../types/wire';
import { type Params, required } from './params';

/** Longer ids are no client of ours (ours are `cli_` and 22 characters): not looked up. */
const CLIENT_ID_MAX_CHARS = 64;

/** The client named, or the 400 that is answered instead of any redirect. */
export async function knownClient(c: Context<HonoEnv>, params: Params): Promise<OAuthClient> {
  const found = await lookUp(required(params, 'client_id'), (id) => oauthClients(c.env).client(id));
  return found ?? refuse('OAUTH_INVALID_REQUEST');
}

/** The registered client the form names, noted as used (a removed one is refused). */
export async function usedClient(c: Context<HonoEnv>, params: Params): Promise<OAuthClient> {
  const found = await lookUp(params.get('client_id') ?? '', (id) =>
    oauthClients(c.env).use(id, Date.now(), false),
  );
  return found ?? refuse('OAUTH_INVALID_CLIENT');
}

function lookUp(
  clientId: string,
  find: (clientId: string) => Promise<OAuthClient | null>,
): Promise<OAuthClient | null> {
  return clientId && clientId.length <= CLIENT_ID_MAX_CHARS
    ? find(clientId)
    : Promise.resolve(null);
}

function refuse(kind: 'OAUTH_INVALID_REQUEST' | 'OAUTH_INVALID_CLIENT'): never {
  throw new GatewayError(kind, {
    message: 'client_id names no client registered with this gateway',
  });
}
