/**
 * An authorization request the gateway checked (oauth/authorize.ts), as the portal's
 * consent page carries it: signed, so the page can only ask the gateway to approve what
 * the gateway itself checked, and short-lived (REQUEST_TTL_MS).
 */
import * as z from 'zod';
import { GatewayError } from '../errors';
import type { KeyRing } from '../tenants/crypto';
import { openRequest } from '../tenants/oauth-secret';

const requestSchema = z.object({
  /** client_id */
  cid: z.string(),
  /** redirect_uri (one the client registered, matched exactly) */
  ru: z.string(),
  /** code_challenge (S256) */
  cc: z.string(),
  /** state, as sent */
  st: z.string().optional(),
  /** the scopes asked for (presets by name) */
  sc: z.array(z.string()),
  /** the resource (RFC 8707) */
  res: z.string(),
  /** when the request ends, ms */
  exp: z.number(),
});

export type AuthorizationRequest = z.infer<typeof requestSchema>;

/** The request a signed text carries, or a refusal: forged, malformed or out of date. */
export async function openAuthorizationRequest(
  ring: KeyRing,
  signed: string,
  now: number,
): Promise<AuthorizationRequest> {
  const parsed = requestSchema.safeParse(await openRequest(ring, signed));
  if (!parsed.success) {
    throw new GatewayError('OAUTH_INVALID_REQUEST', {
      message: 'This authorization request is not one the gateway made',
    });
  }
  if (parsed.data.exp <= now) {
    throw new GatewayError('OAUTH_INVALID_REQUEST', {
      message: 'This authorization request has expired: start again from the app',
    });
  }
  return parsed.data;
}

/** The redirect URI with these parameters added to its query (RFC 6749 4.1.2). */
export function redirectWith(redirectUri: string, params: Record<string, string>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  return url.toString();
}
