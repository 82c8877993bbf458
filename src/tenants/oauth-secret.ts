/**
 * OAuth's own secrets (docs/OAUTH.md, "What the gateway keeps"): authorization codes
 * (`apgc_`) and refresh tokens (`apgr_`), `<prefix><tenant id>.<30 random base62><22
 * base62 of a keyed tag>`. The tenant id says which TenantGuard decides the secret; the
 * tag (HMAC-SHA-256 under a key derived from KEY_ENCRYPTION_KEY for OAuth alone) lets the
 * gateway refuse a made-up one without any I/O, as gateway tokens' tags do. Only a
 * secret's SHA-256 is ever stored.
 *
 * Also the authorization request the consent page carries (`signRequest`): the checked
 * parameters of `GET /oauth/authorize`, signed under the same key, so the portal cannot
 * be handed a request the gateway did not check.
 */
import { decodeUtf8 } from '../bytes';
import { fromBase64Url, type KeyRing, toBase64Url } from './crypto';
import { hashToken, randomBase62, tag } from './token';

export const CODE_PREFIX = 'apgc_';
export const REFRESH_PREFIX = 'apgr_';
export type OauthSecretKind = typeof CODE_PREFIX | typeof REFRESH_PREFIX;

const RANDOM_CHARS = 30;
const TAG_CHARS = 22;
const TENANT_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** A new code or refresh token for a tenant, and its SHA-256 (what is stored). */
export async function mintOauthSecret(
  ring: KeyRing,
  kind: OauthSecretKind,
  tenantId: string,
): Promise<{ secret: string; hash: string }> {
  const body = `${kind}${tenantId}.${randomBase62(RANDOM_CHARS)}`;
  const secret = body + (await tag(ring.current.oauth, body));
  return { secret, hash: await hashToken(secret) };
}

/**
 * The tenant and hash of a presented code or refresh token, or null when it is not one
 * the gateway made (malformed, another kind, or a tag no key of the ring made).
 */
export async function checkOauthSecret(
  ring: KeyRing,
  kind: OauthSecretKind,
  secret: string,
): Promise<{ tenantId: string; hash: string } | null> {
  if (!secret.startsWith(kind) || secret.length > 200) return null;
  const dot = secret.lastIndexOf('.');
  const tenantId = secret.slice(kind.length, dot);
  const rest = secret.slice(dot + 1);
  if (dot < 0 || !TENANT_ID.test(tenantId) || !/^[0-9A-Za-z]+$/.test(rest)) return null;
  if (rest.length !== RANDOM_CHARS + TAG_CHARS) return null;
  const body = secret.slice(0, secret.length - TAG_CHARS);
  const presented = secret.slice(secret.length - TAG_CHARS);
  for (const key of ring.oauth.values()) {
    if ((await tag(key, body)) === presented) return { tenantId, hash: await hashToken(secret) };
  }
  return null;
}

/** `<base64url JSON>.<base64url HMAC>`: a payload only the gateway can have made. */
export async function signRequest(ring: KeyRing, payload: object): Promise<string> {
  const body = toBase64Url(
    new TextEncoder().encode(JSON.stringify({ ...payload, kid: ring.currentKid })),
  );
  const mac = await crypto.subtle.sign('HMAC', ring.current.oauth, new TextEncoder().encode(body));
  return `${body}.${toBase64Url(new Uint8Array(mac))}`;
}

/** The payload of a signed request, or null when it is malformed or its signature fails. */
export async function openRequest(ring: KeyRing, signed: string): Promise<unknown> {
  if (signed.length > 8192) return null;
  const [body, mac, extra] = signed.split('.');
  if (!body || !mac || extra !== undefined) return null;
  let payload: unknown;
  try {
    payload = JSON.parse(decodeUtf8(fromBase64Url(body)));
  } catch {
    return null;
  }
  const kid = (payload as { kid?: unknown } | null)?.kid;
  const key = typeof kid === 'string' ? ring.oauth.get(kid) : undefined;
  if (!key) return null;
  const good = await crypto.subtle.verify(
    'HMAC',
    key,
    fromBase64Url(mac),
    new TextEncoder().encode(body),
  );
  return good ? payload : null;
}
