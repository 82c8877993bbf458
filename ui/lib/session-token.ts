/**
 * Where a browser page keeps a partner's gateway token: this tab's
 * sessionStorage only (never a cookie, localStorage or the URL), under a key
 * the API reference page (/docs, src/openapi/routes.ts) reads too, so a link
 * from the portal to /docs in the same tab arrives signed in.
 */
export const SESSION_TOKEN_KEY = 'gateway-token';

export function storedToken(): string | null {
  try {
    return sessionStorage.getItem(SESSION_TOKEN_KEY);
  } catch {
    return null;
  }
}

export function storeToken(token: string | null): void {
  try {
    if (token) sessionStorage.setItem(SESSION_TOKEN_KEY, token);
    else sessionStorage.removeItem(SESSION_TOKEN_KEY);
  } catch {
    // Storage off: the token lives in memory only, for this page.
  }
}

/**
 * A portal link carries its token in the fragment (`#token=…`), which no
 * server sees; it is taken out of the address bar (and so the history) at once.
 */
export function takeTokenFromFragment(): string | null {
  if (!location.hash.startsWith('#token=')) return null;
  const token = location.hash.slice('#token='.length);
  history.replaceState(null, '', location.pathname + location.search);
  try {
    return decodeURIComponent(token) || null;
  } catch {
    return null;
  }
}
