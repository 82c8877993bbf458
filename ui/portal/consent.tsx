/**
 * An app asks for access (docs/OAUTH.md, "Consent"): the gateway's authorization
 * endpoint sends the partner here with the checked request in the fragment
 * (`#authorize=…`), which is kept in this tab's sessionStorage until answered, so signing
 * in first (a typed token, or the portal link opened in this tab) keeps it. The page
 * shows the app's name, where the answer goes, and the scopes it may have, each
 * checked; the partner may uncheck some, then approves or denies, and the browser goes
 * to where the gateway says (the app's registered redirect URI, with a code or a denial).
 */
import { useEffect, useState } from 'hono/jsx/dom';
import { ApiError, call } from '../lib/api';
import { when } from '../lib/format';
import { messageOf } from './rotate';
import type { ConsentAnswer, ConsentView } from './types';

const REQUEST_KEY = 'oauth-request';

/** Takes an authorization request from the address bar into this tab's storage. */
export function takeAuthorizeRequest(): void {
  if (!location.hash.startsWith('#authorize=')) return;
  const request = location.hash.slice('#authorize='.length);
  history.replaceState(null, '', location.pathname + location.search);
  try {
    sessionStorage.setItem(REQUEST_KEY, request);
  } catch {
    // Storage off: nothing to keep it in; the app can ask again.
  }
}

export function pendingRequest(): string | null {
  try {
    return sessionStorage.getItem(REQUEST_KEY);
  } catch {
    return null;
  }
}

export function forgetRequest(): void {
  try {
    sessionStorage.removeItem(REQUEST_KEY);
  } catch {
    // Nothing kept.
  }
}

export function Consent(props: { token: string; request: string; onDone: () => void }) {
  const [view, setView] = useState<ConsentView | null>(null);
  const [checked, setChecked] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const auth = { authorization: `Bearer ${props.token}` };

  useEffect(() => {
    call<ConsentView>(`/oauth/consent?request=${encodeURIComponent(props.request)}`, {
      headers: auth,
    })
      .then((v) => {
        setView(v);
        setChecked(v.scopes_offered);
        document.getElementById('consent-title')?.focus();
      })
      .catch((err) => {
        setError(
          err instanceof ApiError && err.code === 40300
            ? 'This token cannot approve apps (it lacks partner:manage): open a portal link that lets you manage apps, in this tab.'
            : messageOf(err),
        );
      });
  }, [props.request]);

  const answer = async (approve: boolean) => {
    setBusy(true);
    setError(null);
    try {
      const { redirect_to } = await call<ConsentAnswer>('/oauth/consent', {
        method: 'POST',
        headers: auth,
        body: { request: props.request, approve, ...(approve ? { scopes: checked } : {}) },
      });
      forgetRequest();
      location.assign(redirect_to);
    } catch (err) {
      setError(messageOf(err));
      setBusy(false);
    }
  };

  const toggle = (scope: string) =>
    setChecked(checked.includes(scope) ? checked.filter((s) => s !== scope) : [...checked, scope]);

  const cancel = () => {
    forgetRequest();
    props.onDone();
  };

  if (!view) {
    return (
      <section aria-labelledby="consent-title">
        <h2 id="consent-title" tabIndex={-1}>
          An app asks for access
        </h2>
        <p class="error" role="alert">
          {error ?? ''}
        </p>
        {error && (
          <button type="button" class="secondary" onClick={cancel}>
            Forget this request
          </button>
        )}
      </section>
    );
  }
  return (
    <section aria-labelledby="consent-title" class="consent">
      <h2 id="consent-title" tabIndex={-1}>
        Allow <span data-testid="consent-app">{view.client.name}</span> to use your account?
      </h2>
      <p>
        <strong>{view.client.name}</strong> asks to call the API of{' '}
        <strong>{view.tenant.name}</strong> for you. Your answer goes back to{' '}
        <strong data-testid="consent-host">{view.redirect_host}</strong> (
        <code>{view.redirect_uri}</code>). Only approve it if you trust that address.
      </p>
      <p class="hint">
        {view.client.kind === 'operator'
          ? 'Registered by your gateway operator.'
          : 'This app registered itself: the operator has not vetted it.'}{' '}
        The access lasts until you revoke it here, under "Apps you approved". This request ends{' '}
        {when(view.expires_at)}.
      </p>
      {view.refusal ? (
        <p class="error" role="alert">
          {view.refusal}
        </p>
      ) : (
        <fieldset>
          <legend>It may (uncheck what it should not):</legend>
          {view.scopes_offered.map((scope) => (
            <label class="choice">
              <input
                type="checkbox"
                name="scope"
                value={scope}
                checked={checked.includes(scope)}
                onChange={() => toggle(scope)}
              />
              <code>{scope}</code>
            </label>
          ))}
        </fieldset>
      )}
      {view.scopes_withheld.length > 0 && (
        <p class="hint">
          It also asked for {view.scopes_withheld.join(', ')}, which your account may not grant.
        </p>
      )}
      <p class="error" role="alert">
        {error ?? ''}
      </p>
      <div class="row">
        {!view.refusal && (
          <button
            type="button"
            onClick={() => answer(true)}
            disabled={busy || checked.length === 0}
          >
            Approve
          </button>
        )}
        <button type="button" class="secondary" onClick={() => answer(false)} disabled={busy}>
          Deny
        </button>
      </div>
    </section>
  );
}
