/**
 * What an OAuth client is registered with (docs/OAUTH.md, "Clients"): a name and its
 * redirect URIs, each matched exactly at authorization (RFC 9700 2.1). A redirect URI is
 * https, or http on a loopback address (a desktop tool's own listener, RFC 8252 7.3), or
 * a private-use scheme with a dot (`com.example.app:/callback`, RFC 8252 7.1); never one
 * with a fragment or credentials, and never `javascript:`, `data:` or `file:`. No Worker
 * code: the operator API's definitions use these schemas.
 */
import * as z from 'zod';
import { nameField } from '../operations/schemas';

/** Bounds of one registration (docs/BOUNDS.md). */
export const REDIRECT_URI_MAX_CHARS = 512;
export const REDIRECT_URIS_MAX = 5;
export const CLIENT_NAME_MAX_CHARS = 100;
/** The largest registration body read (RFC 7591 `POST /oauth/register`). */
export const REGISTRATION_MAX_BYTES = 4096;

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** Why a redirect URI is refused, or null when it is acceptable. */
export function redirectUriProblem(uri: string): string | null {
  if (uri.length > REDIRECT_URI_MAX_CHARS) {
    return `a redirect URI is at most ${REDIRECT_URI_MAX_CHARS} characters`;
  }
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `${uri.slice(0, 100)} is not an absolute URI`;
  }
  if (uri.includes('#')) return 'a redirect URI has no fragment';
  if (url.username || url.password) return 'a redirect URI carries no credentials';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:') {
    return LOOPBACK.has(url.hostname) ? null : 'http is only for a loopback address; use https';
  }
  // A private-use scheme names its owner as a reverse domain (RFC 8252 7.1).
  return url.protocol.slice(0, -1).includes('.')
    ? null
    : `${url.protocol} is no redirect scheme: use https, loopback http or com.example.app:/…`;
}

const redirectUriField = z.string().superRefine((uri, ctx) => {
  const problem = redirectUriProblem(uri);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/** An operator's registration (POST /admin/oauth/clients). */
export const clientBody = z.strictObject({
  client_name: nameField('client_name', CLIENT_NAME_MAX_CHARS),
  redirect_uris: z.array(redirectUriField).min(1).max(REDIRECT_URIS_MAX),
});
