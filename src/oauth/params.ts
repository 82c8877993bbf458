/**
 * Reading OAuth's parameters: a form body (`application/x-www-form-urlencoded`, the
 * token and revocation endpoints, RFC 6749 3.2) or a query (the authorization
 * endpoint), each parameter at most once (RFC 6749 3.1, 3.2), the body counted while
 * it streams, never read past FORM_MAX_BYTES.
 */
import type { Context } from 'hono';
import { decodeUtf8, readCapped } from '../bytes';
import { GatewayError } from '../errors';
import type { HonoEnv } from '../types/context';

/** The largest form body an OAuth endpoint reads (docs/BOUNDS.md). */
export const FORM_MAX_BYTES = 8192;

export type Params = ReadonlyMap<string, string>;

const invalid = (message: string) => new GatewayError('OAUTH_INVALID_REQUEST', { message });

/** The parameters, or a refusal naming the one sent twice. */
export function uniqueParams(search: URLSearchParams): Params {
  const out = new Map<string, string>();
  for (const [name, value] of search) {
    if (out.has(name)) throw invalid(`${name.slice(0, 40)} is sent more than once`);
    out.set(name, value);
  }
  return out;
}

/** A form body's parameters (refused: another content type, too large, a repeat). */
export async function formParams(c: Context<HonoEnv>): Promise<Params> {
  const type = c.req.header('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    throw invalid('Send the parameters as application/x-www-form-urlencoded');
  }
  const tooLarge = () => invalid(`The form is at most ${FORM_MAX_BYTES} bytes`);
  const declared = c.req.header('content-length');
  if (declared !== undefined && Number(declared) > FORM_MAX_BYTES) throw tooLarge();
  const bytes = await readCapped(c.req.raw.body, FORM_MAX_BYTES, tooLarge);
  return uniqueParams(new URLSearchParams(decodeUtf8(bytes)));
}

/** A parameter that must be there and not empty. */
export function required(params: Params, name: string): string {
  const value = params.get(name);
  if (!value) throw invalid(`${name} is required`);
  return value;
}
