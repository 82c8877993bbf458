/**
 * What a registered redirect URI says of its app (docs/OAUTH.md): the browser origin its
 * calls come from, only for an http(s) page (an app's own scheme, `com.example.app:/cb`,
 * has none: its URL's origin is the string "null", which a sandboxed page also sends),
 * and the host a partner is shown at consent.
 */
export function webOriginOf(uri: string): string | null {
  const url = new URL(uri);
  return url.protocol === 'https:' || url.protocol === 'http:' ? url.origin : null;
}

/** The host, or the scheme of an app's own URI; the text itself when it is no URL. */
export function redirectHostOf(uri: string): string {
  try {
    const url = new URL(uri);
    return url.host || url.protocol.slice(0, -1);
  } catch {
    return uri;
  }
}
