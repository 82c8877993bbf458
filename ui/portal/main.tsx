/**
 * The partner portal (/portal): a tenant's own view with its own gateway
 * token. The token is typed in or arrives in a portal link's fragment, and is
 * kept in this tab's sessionStorage only. Every call names no tenant: the
 * gateway answers for the token's own tenant (GET /token, GET /usage). With
 * `partner:manage`, the partner approves apps (OAuth consent, consent.tsx) and
 * manages the apps it approved and its own keys (apps.tsx, keys.tsx).
 */
import { render, useEffect, useRef, useState } from 'hono/jsx/dom';
import { ApiError, call } from '../lib/api';
import { count, duration, quotaPeriod, when } from '../lib/format';
import { storedToken, storeToken, takeTokenFromFragment } from '../lib/session-token';
import { ColumnHeads } from '../lib/table';
import { Apps } from './apps';
import { Consent, pendingRequest, takeAuthorizeRequest } from './consent';
import { FieldRow } from './field-row';
import { Keys } from './keys';
import { RecentFailures } from './requests';
import { messageOf, NewTokenOnce, RotateToken } from './rotate';
import type { Me, Meter, Rotated, Usage } from './types';
import { UsageCharts } from './usage-chart';

/** The scope that lets a token approve apps and manage the partner's keys (docs/OAUTH.md). */
const PARTNER_SCOPE = 'partner:manage';

/** What a gateway token looks like (docs/OPERATING.md), checked before any call. */
const TOKEN_SHAPE = /^apgw_[0-9A-Za-z]{20,80}$/;

export function tokenError(text: string): string | null {
  const t = text.trim();
  if (!t) return 'Enter your gateway token';
  if (!TOKEN_SHAPE.test(t))
    return 'A gateway token starts with apgw_ followed by letters and digits';
  return null;
}

interface Loaded {
  me: Me;
  usage: Usage | null;
  /** Why usage is missing (the token lacks usage:read), when it is. */
  usageNote: string | null;
}

async function load(token: string): Promise<Loaded> {
  const auth = { authorization: `Bearer ${token}` };
  const me = await call<Me>('/token', { headers: auth });
  let usage: Usage | null = null;
  let usageNote: string | null = null;
  try {
    usage = await call<Usage>('/usage', { headers: auth });
  } catch (err) {
    if (err instanceof ApiError && err.code === 40300) {
      usageNote = 'This token lacks the scope usage:read, so its usage cannot be shown.';
    } else usageNote = messageOf(err);
  }
  return { me, usage, usageNote };
}

function SignIn(props: { onToken: (token: string) => void; error: string | null }) {
  const [error, setError] = useState<string | null>(null);
  const shown = error ?? props.error;
  const submit = (e: Event) => {
    e.preventDefault();
    const input = (e.target as HTMLFormElement).elements.namedItem('token') as HTMLInputElement;
    const problem = tokenError(input.value);
    setError(problem);
    if (problem) {
      input.focus();
      return;
    }
    const token = input.value.trim();
    // The token leaves the form at once: it is never left in the page.
    input.value = '';
    props.onToken(token);
  };
  return (
    <section aria-labelledby="sign-in-title">
      <h2 id="sign-in-title">Sign in with your gateway token</h2>
      <form onSubmit={submit} noValidate>
        <FieldRow
          id="token"
          label="Gateway token"
          input={{ name: 'token', type: 'password', autocomplete: 'off', spellcheck: false }}
          button={<button type="submit">Open</button>}
          hint="Kept in this browser tab only (sessionStorage) and sent to this gateway alone. Or open the portal link your operator gave you."
          error={shown}
        />
      </form>
    </section>
  );
}

/**
 * The token the page runs on. Once rotated, it says so at once: when it ends now (the
 * overlap chosen) and which token replaces it.
 */
function TokenFacts({ me, rotated }: { me: Me; rotated: Rotated | null }) {
  return (
    <section aria-labelledby="token-title">
      <h2 id="token-title" tabIndex={-1}>
        Your token
      </h2>
      <dl>
        <dt>Tenant</dt>
        <dd>
          <span data-testid="tenant-name">{me.tenant.name}</span> (
          <code data-testid="tenant-id">{me.tenant.id}</code>)
        </dd>
        <dt>Token</dt>
        <dd>
          {me.token.name} (<code>{me.token.id}</code>, ends in …{me.token.last4})
        </dd>
        <dt>Expires</dt>
        <dd>
          <Expiry at={rotated ? rotated.old_token.expires_at : me.token.expires_at} />
          {rotated ? (
            <span data-testid="replaced-by">
              {' '}
              (rotated: replaced by …{rotated.last4}, shown once below)
            </span>
          ) : null}
        </dd>
        <dt>Scopes</dt>
        <dd>
          <ul class="scopes">
            {me.token.scopes.map((s) => (
              <li>
                <code>{s}</code>
              </li>
            ))}
          </ul>
        </dd>
      </dl>
    </section>
  );
}

/**
 * When the token ends, and how long is left, kept true as time passes: each
 * second in its last two minutes, else every 15 s; once past, it says so.
 */
function Expiry(props: { at: string | null }) {
  const [now, setNow] = useState(Date.now());
  const left = props.at ? Date.parse(props.at) - now : Number.POSITIVE_INFINITY;
  useEffect(() => {
    if (!props.at || left <= 0) return;
    const timer = setTimeout(() => setNow(Date.now()), left < 120_000 ? 1000 : 15_000);
    return () => clearTimeout(timer);
  }, [props.at, now]);
  if (!props.at) return <span data-testid="expiry">never</span>;
  if (left <= 0) {
    return (
      <span data-testid="expiry" class="error">
        {when(props.at, now)}: this token has ended, and the gateway refuses it now.
      </span>
    );
  }
  return <span data-testid="expiry">{when(props.at, now)}</span>;
}

/**
 * Each meter is shown once, all from one reading of the TenantGuard: rate policies
 * here, quotas as gauges (from GET /usage); without usage, the quotas here too.
 */
function RateStanding({ standing }: { standing: Meter[] }) {
  return (
    <section aria-labelledby="standing-title">
      <h2 id="standing-title">Rate-limit standing now</h2>
      {standing.length === 0 ? (
        <p>No rate limits apply to this token.</p>
      ) : (
        <table>
          <caption class="visually-hidden">Each policy: its allowance and what remains</caption>
          <ColumnHeads names={['Policy', 'Allows', 'Remaining', 'Full again in']} />
          <tbody>
            {standing.map((s) => (
              <tr>
                <th scope="row">{s.name}</th>
                <td>
                  {count(s.limit)} per {duration(s.window_s)}
                </td>
                <td>{count(s.remaining)}</td>
                <td>{duration(s.reset_s)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** A quota's period: "this UTC day", "this UTC month (until Dec 1)". */
function quotaText(m: Meter): string {
  const q = quotaPeriod(m);
  if (!q) return `per ${duration(m.window_s)}`;
  return q.period === 'UTC day' ? 'this UTC day' : `this UTC month (until ${q.resets})`;
}

function Quotas({ usage }: { usage: Usage }) {
  const quotas = usage.meters.filter((m) => m.kind === 'quota');
  return (
    <section aria-labelledby="quota-title">
      <h2 id="quota-title">Quotas</h2>
      {quotas.length === 0 ? (
        <p>Your tenant has no quotas.</p>
      ) : (
        <ul class="gauges">
          {quotas.map((m) => (
            <li>
              <span id={`quota-${m.name}`}>
                {m.name}: {count(m.used)} of {count(m.limit)} used {quotaText(m)},{' '}
                {m.reserved ? `${count(m.reserved)} reserved for requests in flight, ` : ''}
                {count(m.remaining)} left; resets in {duration(m.reset_s)}
              </span>
              <meter
                min={0}
                max={m.limit}
                low={m.limit * 0.8}
                high={m.limit * 0.95}
                optimum={0}
                value={m.used}
                aria-labelledby={`quota-${m.name}`}
              />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Portal(props: { token: string; loaded: Loaded; onToken: (t: string) => void }) {
  const { me, usage, usageNote } = props.loaded;
  const standing = usage ? usage.meters.filter((m) => m.kind === 'rate') : me.meters;
  // A rotation made here: its new token shows once, at the top, until saved.
  const [rotated, setRotated] = useState<Rotated | null>(null);
  const saved = (next: string) => {
    setRotated(null);
    props.onToken(next);
    document.getElementById('rotate-title')?.focus();
  };
  return (
    <>
      <TokenFacts me={me} rotated={rotated} />
      {rotated ? <NewTokenOnce rotated={rotated} onSaved={saved} /> : null}
      <RateStanding standing={standing} />
      {usage ? (
        <>
          <Quotas usage={usage} />
          <section aria-labelledby="usage-title">
            <h2 id="usage-title">Usage</h2>
            <UsageCharts usage={usage} />
          </section>
          <RecentFailures token={props.token} />
        </>
      ) : (
        <section aria-labelledby="usage-title">
          <h2 id="usage-title">Usage</h2>
          <p>{usageNote}</p>
        </section>
      )}
      <section aria-labelledby="docs-title">
        <h2 id="docs-title">API reference</h2>
        <p>
          {/* Same tab: /docs reads the token from this tab's sessionStorage, never the URL. */}
          <a href="/docs">Open the API reference, signed in with this token</a>
        </p>
      </section>
      {me.token.scopes.includes(PARTNER_SCOPE) && (
        <>
          <Apps token={props.token} />
          <Keys token={props.token} />
        </>
      )}
      <section aria-labelledby="rotate-title">
        <h2 id="rotate-title" tabIndex={-1}>
          Rotate your token
        </h2>
        {!me.can_rotate ? (
          <p data-testid="no-rotate">
            This token cannot rotate itself: it lacks the scope <code>token:rotate</code>, which no
            preset grants. Ask your gateway operator (whoever gave you this token or portal link) to
            issue you a token with <code>token:rotate</code>, or to rotate this one for you.
          </p>
        ) : rotated ? (
          <p>Your new token is shown once at the top of the page.</p>
        ) : (
          <RotateToken token={props.token} onRotated={setRotated} />
        )}
      </section>
    </>
  );
}

function App() {
  const [token, setToken] = useState<string | null>(null);
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // An app's authorization request waiting for this partner's answer (consent.tsx).
  const [request, setRequest] = useState<string | null>(null);

  const open = async (next: string) => {
    setBusy(true);
    setError(null);
    try {
      const data = await load(next);
      storeToken(next);
      setToken(next);
      setLoaded(data);
    } catch (err) {
      storeToken(null);
      setToken(null);
      setLoaded(null);
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  useEffect(() => {
    takeAuthorizeRequest();
    setRequest(pendingRequest());
    const fromLink = takeTokenFromFragment();
    const start = fromLink ?? storedToken();
    if (start) void open(start);
    // A link opened over this page (only its fragment differs) loads no new page: take it here.
    const arrived = () => {
      takeAuthorizeRequest();
      setRequest(pendingRequest());
      const token = takeTokenFromFragment();
      if (token) void open(token);
    };
    window.addEventListener('hashchange', arrived);
    return () => window.removeEventListener('hashchange', arrived);
  }, []);

  // Keyboard and screen-reader users land where the page changed: the portal once signed
  // in (not on a refresh, which leaves the focus where it was), or the refused field.
  const wasSignedIn = useRef(false);
  useEffect(() => {
    if (busy) return;
    const signedIn = loaded !== null;
    if (signedIn && !wasSignedIn.current) document.getElementById('token-title')?.focus();
    if (!signedIn && error) document.getElementById('token')?.focus();
    wasSignedIn.current = signedIn;
  }, [loaded, error, busy]);

  const signOut = () => {
    storeToken(null);
    setToken(null);
    setLoaded(null);
  };

  return (
    <>
      <header>
        <h1>Partner portal</h1>
        {token && (
          <div class="row">
            <button type="button" onClick={() => token && open(token)} disabled={busy}>
              Refresh
            </button>
            <button type="button" onClick={signOut}>
              Sign out
            </button>
          </div>
        )}
      </header>
      <main>
        <p aria-live="polite" class="hint">
          {busy ? 'Loading…' : ''}
        </p>
        {token && loaded && request ? (
          <Consent token={token} request={request} onDone={() => setRequest(null)} />
        ) : token && loaded ? (
          <Portal token={token} loaded={loaded} onToken={open} />
        ) : (
          <>
            {request && (
              <p class="hint" data-testid="consent-pending">
                An app asks for access to your account: sign in to answer it.
              </p>
            )}
            <SignIn onToken={open} error={error} />
          </>
        )}
      </main>
    </>
  );
}

const root = document.getElementById('portal');
if (root) render(<App />, root);
