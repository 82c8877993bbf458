/**
 * A tenant's tokens: list, issue (the token shown once, with a copy button),
 * rotate with an overlap, revoke (alone, or with its successors). Tokens of one
 * rotation line are shown together as a family, each saying who rotated it
 * and when. The scopes picker never preselects an `apikeys:` scope and warns
 * when one is chosen.
 */
import { useEffect, useState } from 'hono/jsx/dom';
import type { TokenLimits, TokenListing } from '../../src/types/wire';
import { plural } from '../lib/format';
import { ColumnHeads } from '../lib/table';
import { api } from './api';
import {
  ConfirmButton,
  type Errors,
  Field,
  FormError,
  fmtTime,
  Notice,
  Options,
  PageError,
  refusal,
  SecretOnce,
  useFormErrors,
  useModal,
} from './form';
import { isApiKeyScope } from './scopes';

/** An OAuth grant lives while its app can refresh (its access tokens last an hour at most). */
const endOf = (t: TokenListing) => t.grant?.refresh_until ?? t.expires_at;

const stateOf = (t: TokenListing) => {
  const end = endOf(t);
  return t.revoked_at ? 'revoked' : end && Date.parse(end) <= Date.now() ? 'expired' : 'active';
};

/** Where a token came from, when not from the operator: an app's OAuth grant, a partner's key. */
function originText(t: TokenListing): string | null {
  if (t.grant) {
    const resource = t.resource ? `, for ${t.resource}` : '';
    return `OAuth app ${t.grant.client_name} (${t.grant.client_id}) ${t.grant.origin ? ` from ${t.grant.origin}` : ''}, granted by ${t.grant.granted_by}${resource}; refreshes until ${fmtTime(t.grant.refresh_until)}`;
  }
  return t.made_by ? `partner key, made by ${t.made_by}` : null;
}

/** The hour a token was last used in (the usage history keeps hours). */
const lastUsed = (t: TokenListing) =>
  t.last_used_at ? `${fmtTime(t.last_used_at).slice(0, 13)}:00–:59 UTC` : 'not in the history';

/** How long the old token of a rotation keeps working (the API allows 0 s..30 days). */
const OVERLAPS: [string, number][] = [
  ['end it now', 0],
  ['5 minutes', 300],
  ['1 hour', 3600],
  ['1 day', 86_400],
  ['7 days', 7 * 86_400],
  ['30 days', 30 * 86_400],
];
/** How long a partner portal link lives (the API allows 1..60 minutes). */
const LINK_LIVES: [string, number][] = [
  ['5 minutes', 300],
  ['15 minutes', 900],
  ['30 minutes', 1800],
  ['1 hour', 3600],
];

/**
 * Tokens of one family next to each other, in the order they were made (the list
 * comes oldest first); families in the order their first token appears.
 */
export function byFamily(tokens: TokenListing[]): TokenListing[] {
  const families = new Map<string, TokenListing[]>();
  for (const t of tokens) {
    const members = families.get(t.family_id) ?? [];
    members.push(t);
    families.set(t.family_id, members);
  }
  return [...families.values()].flat();
}

/** Who rotated a token into which, and when; what it replaced. */
function rotationText(t: TokenListing, byId: Map<string, TokenListing>): string {
  const parts: string[] = [];
  const before = t.ancestor_id ? byId.get(t.ancestor_id) : undefined;
  if (before) parts.push(`replaces …${before.last4}`);
  else if (t.ancestor_id) parts.push(`replaces ${t.ancestor_id}`);
  if (t.successor_id && t.rotated_at) {
    const after = byId.get(t.successor_id);
    const into = after ? `…${after.last4}` : t.successor_id;
    parts.push(`rotated into ${into} by ${t.rotated_by ?? 'unknown'}, ${fmtTime(t.rotated_at)}`);
  }
  return parts.join('; ') || 'never rotated';
}

/** A token that may rotate now: active, with no working successor nor working ancestor. */
function mayRotate(t: TokenListing, byId: Map<string, TokenListing>): boolean {
  const working = (id: string | null) => {
    const other = id ? byId.get(id) : undefined;
    return other !== undefined && stateOf(other) === 'active';
  };
  // An OAuth grant's token is renewed by its app's refresh, never rotated.
  if (t.grant) return false;
  return stateOf(t) === 'active' && !working(t.successor_id) && !working(t.ancestor_id);
}

function limitsText(l: TokenLimits | null): string {
  if (!l) return 'tenant limits only';
  const parts = l.policies.map((p) => `${p.limit} per ${p.window_s} s`);
  if (l.quota.daily) parts.push(`${l.quota.daily} a day`);
  if (l.quota.monthly) parts.push(`${l.quota.monthly} a month`);
  return parts.join(', ') || 'none';
}

export function TokensSection(props: { tenantId: string; canChange: boolean }) {
  const [tokens, setTokens] = useState<TokenListing[] | null>(null);
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const [secret, setSecret] = useState<{ label: string; value: string } | null>(null);
  const [reload, setReload] = useState(0);

  useEffect(() => {
    api
      .tokens(props.tenantId)
      .then((r) => setTokens(r.tokens))
      .catch((err: unknown) => setError(refusal(err, [])._form ?? 'Failed'));
  }, [props.tenantId, reload]);

  const again = () => setReload(reload + 1);
  return (
    <section aria-labelledby="tokens-title">
      <h2 id="tokens-title">Tokens</h2>
      <PageError error={error} />
      {notice ? <Notice text={notice} /> : null}
      {secret ? (
        <SecretOnce label={secret.label} secret={secret.value} onDone={() => setSecret(null)} />
      ) : null}
      {tokens === null ? (
        <p class="loading">Loading…</p>
      ) : (
        <TokenTable
          tokens={tokens}
          tenantId={props.tenantId}
          canChange={props.canChange}
          onSecret={setSecret}
          onNotice={(text) => {
            setNotice(text);
            again();
          }}
          again={again}
        />
      )}
      {props.canChange && !secret ? (
        <PortalLinkForm
          tenantId={props.tenantId}
          made={(label, value) => {
            setSecret({ label, value });
            again();
          }}
          failed={setError}
        />
      ) : null}
      {props.canChange && !secret ? (
        <IssueToken
          tenantId={props.tenantId}
          issued={(label, value) => {
            setSecret({ label, value });
            again();
          }}
        />
      ) : null}
    </section>
  );
}

/** The tokens, family by family, with their actions. */
function TokenTable(props: {
  tokens: TokenListing[];
  tenantId: string;
  canChange: boolean;
  onSecret: (secret: { label: string; value: string }) => void;
  onNotice: (text: string) => void;
  again: () => void;
}) {
  const byId = new Map(props.tokens.map((t) => [t.id, t]));
  const familySize = new Map<string, number>();
  for (const t of props.tokens) familySize.set(t.family_id, (familySize.get(t.family_id) ?? 0) + 1);
  return (
    <table class="grid">
      <caption>
        {plural(props.tokens.length, 'token')}; the secrets are never shown again after issue.
        Tokens of one rotation line are listed together as a family.
      </caption>
      <ColumnHeads
        names={[
          'Name',
          'Token',
          'Scopes',
          'Expires',
          'State',
          'Last used',
          'Rotation',
          'Own limits',
          props.canChange && 'Actions',
        ]}
      />
      <tbody data-testid="token-rows">
        {byFamily(props.tokens).map((t) => {
          const size = familySize.get(t.family_id) ?? 1;
          const successor = t.successor_id ? byId.get(t.successor_id) : undefined;
          return (
            <tr
              key={t.id}
              data-token-id={t.id}
              data-family-id={t.family_id}
              class={
                [size > 1 ? 'family-member' : '', stateOf(t) === 'active' ? '' : 'ended']
                  .filter(Boolean)
                  .join(' ') || undefined
              }
            >
              <td>
                {t.name}
                {size > 1 ? (
                  <>
                    <br />
                    <span class="hint">family of {size}</span>
                  </>
                ) : null}
                {originText(t) ? (
                  <>
                    <br />
                    <span class="hint" data-testid="token-origin">
                      {originText(t)}
                    </span>
                  </>
                ) : null}
              </td>
              <td>
                <code>
                  {t.prefix}…{t.last4}
                </code>
                <br />
                <code class="hint id">{t.id}</code>
              </td>
              <td class="scopes">{t.scopes.join(' ')}</td>
              <td>{t.expires_at ? fmtTime(t.expires_at) : 'never'}</td>
              <td>
                <span class={`status status-${stateOf(t)}`}>{stateOf(t)}</span>
                {t.revoked_at ? <span class="hint"> {fmtTime(t.revoked_at)}</span> : null}
              </td>
              <td data-testid="last-used">{lastUsed(t)}</td>
              <td data-testid="rotation">{rotationText(t, byId)}</td>
              <td>{limitsText(t.limits)}</td>
              {props.canChange ? (
                <td class="row-actions">
                  {stateOf(t) === 'active' ? (
                    <>
                      {mayRotate(t, byId) ? (
                        <RotateButton
                          tenantId={props.tenantId}
                          token={t}
                          rotated={(value) => {
                            props.onSecret({ label: `The new token for ${t.name}`, value });
                            props.again();
                          }}
                        />
                      ) : null}
                      <TokenLimitsButton
                        tenantId={props.tenantId}
                        token={t}
                        saved={props.onNotice}
                      />
                      <ConfirmButton
                        label={`Revoke ${t.name} ${t.last4}`}
                        title={`Revoke ${t.name}?`}
                        message={
                          successor
                            ? `The token is refused from the very next request, everywhere. Its successor …${successor.last4} keeps working. This cannot be undone.`
                            : 'The token is refused from the very next request, everywhere. This cannot be undone.'
                        }
                        confirmLabel="Revoke"
                        danger
                        onConfirm={async () => {
                          await api.revokeToken(props.tenantId, t.id);
                          props.onNotice(`Token ${t.prefix}…${t.last4} revoked.`);
                        }}
                      />
                      {successor ? (
                        <ConfirmButton
                          label={`Revoke ${t.name} ${t.last4} and its successors`}
                          title={`Revoke ${t.name} and every token rotated from it?`}
                          message="This token and every token rotated from it are refused from the very next request, everywhere: use it when a token of this family may have leaked. This cannot be undone."
                          confirmLabel="Revoke all"
                          danger
                          onConfirm={async () => {
                            const r = await api.revokeToken(props.tenantId, t.id, true);
                            const more = r.successors_revoked.length;
                            props.onNotice(
                              `Token ${t.prefix}…${t.last4} and ${plural(more, 'successor')} revoked.`,
                            );
                          }}
                        />
                      ) : null}
                    </>
                  ) : null}
                </td>
              ) : null}
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

const EXPIRIES: [string, number | null][] = [
  ['Never', null],
  ['In 30 days', 30],
  ['In 90 days', 90],
  ['In 1 year', 365],
];

// The API names `limits.policies.0.limit` and `limits.quota.daily`: each lands by its own field.
const FIELDS = [
  'name',
  'scopes',
  'expires_at',
  'limits.policies',
  'limits.quota',
  'limits',
] as const;

function IssueToken(props: { tenantId: string; issued: (label: string, token: string) => void }) {
  const [name, setName] = useState('');
  // `full` is the safe default: every scope but the platform's API keys.
  const [scopes, setScopes] = useState<string[]>(['full']);
  const [expiry, setExpiry] = useState('Never');
  const [perMinute, setPerMinute] = useState('');
  const [daily, setDaily] = useState('');
  const [errors, setErrors] = useState<Errors>({});
  const [busy, setBusy] = useState(false);
  const { form, showErrors, showRefusal } = useFormErrors(setErrors);
  const risky = scopes.filter(isApiKeyScope);
  // What the gateway grants today: its groups' scopes (declared ones included) and presets.
  const [offered, setOffered] = useState<{
    presets: readonly string[];
    scopes: readonly string[];
  } | null>(null);
  useEffect(() => {
    api.operations().then(
      (o) => setOffered({ presets: o.presets, scopes: o.scopes }),
      () => setOffered({ presets: ['full'], scopes: [] }),
    );
  }, []);

  const toggle = (scope: string, on: boolean) =>
    setScopes(on ? [...scopes, scope] : scopes.filter((s) => s !== scope));

  const submit = async (e: Event) => {
    e.preventDefault();
    const found: Errors = {};
    if (!/^\S.{0,63}$/.test(name.trim()) || name.trim().length === 0) {
      found.name = 'Give the token a name (1 to 64 characters)';
    }
    if (scopes.length === 0) found.scopes = 'Choose at least one scope or preset';
    const whole = (s: string) => (s === '' ? undefined : Number(s));
    const rate = whole(perMinute);
    const day = whole(daily);
    if (rate !== undefined && !(Number.isInteger(rate) && rate >= 1 && rate <= 1e9)) {
      found['limits.policies'] = 'Requests per minute must be a whole number from 1';
    }
    if (day !== undefined && !(Number.isInteger(day) && day >= 1 && day <= 1e9)) {
      found['limits.quota'] = 'The daily quota must be a whole number from 1';
    }
    if (showErrors(found)) return;
    const days = EXPIRIES.find(([label]) => label === expiry)?.[1] ?? null;
    const limits: TokenLimits | undefined =
      rate !== undefined || day !== undefined
        ? {
            policies: rate ? [{ name: 'per-minute', limit: rate, window_s: 60 }] : [],
            quota: day ? { daily: day } : {},
          }
        : undefined;
    setBusy(true);
    try {
      const token = await api.issueToken(props.tenantId, {
        name: name.trim(),
        scopes,
        ...(days ? { expires_at: new Date(Date.now() + days * 86_400_000).toISOString() } : {}),
        ...(limits ? { limits } : {}),
      });
      setName('');
      setScopes(['full']);
      setPerMinute('');
      setDaily('');
      props.issued(`The new token ${token.name}`, token.token);
    } catch (err) {
      showRefusal(err, FIELDS);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form ref={form} class="card" onSubmit={submit} noValidate aria-labelledby="issue-title">
      <h3 id="issue-title">Issue a token</h3>
      <FormError errors={errors} />
      <Field
        id="token-name"
        name="name"
        label="Name"
        value={name}
        onValue={setName}
        error={errors.name}
        required
      />
      <fieldset
        aria-describedby={
          [errors.scopes && 'scopes-error', risky.length && 'scopes-warning']
            .filter(Boolean)
            .join(' ') || undefined
        }
      >
        <legend>Scopes</legend>
        <div class="checks" aria-busy={offered ? undefined : 'true'}>
          {[...(offered?.presets ?? []), ...(offered?.scopes ?? [])].map((s) => (
            <label class={isApiKeyScope(s) ? 'check risky' : 'check'}>
              <input
                type="checkbox"
                name="scopes"
                value={s}
                checked={scopes.includes(s)}
                onChange={(e: Event) => toggle(s, (e.target as HTMLInputElement).checked)}
              />
              {s}
              {offered?.presets.includes(s) ? ' (preset)' : ''}
            </label>
          ))}
        </div>
        {risky.length ? (
          <p class="warning" id="scopes-warning" role="alert">
            {risky.join(', ')} {risky.length === 1 ? 'reaches' : 'reach'} the platform's own API
            keys (secrets of the whole platform account). Grant {risky.length === 1 ? 'it' : 'them'}{' '}
            only to a token that must manage API keys.
          </p>
        ) : null}
        {errors.scopes ? (
          <p class="error" id="scopes-error">
            {errors.scopes}
          </p>
        ) : null}
      </fieldset>
      <div class="field">
        <label for="token-expiry">Expiry</label>
        <select
          id="token-expiry"
          name="expires_at"
          value={expiry}
          onChange={(e: Event) => setExpiry((e.target as HTMLSelectElement).value)}
        >
          {EXPIRIES.map(([label]) => (
            <option value={label} selected={label === expiry}>
              {label}
            </option>
          ))}
        </select>
        {errors.expires_at ? <p class="error">{errors.expires_at}</p> : null}
      </div>
      <fieldset>
        <legend>Own limits (optional, besides the tenant's)</legend>
        <Field
          id="token-rate"
          name="limits.policies"
          label="Requests per minute"
          inputmode="numeric"
          value={perMinute}
          onValue={setPerMinute}
          error={errors['limits.policies'] ?? errors.limits}
        />
        <Field
          id="token-daily"
          name="limits.quota"
          label="Requests a day"
          inputmode="numeric"
          value={daily}
          onValue={setDaily}
          error={errors['limits.quota']}
        />
      </fieldset>
      <div class="actions">
        <button type="submit" class="primary" disabled={busy}>
          Issue token
        </button>
      </div>
    </form>
  );
}

const isWhole = (s: string) => /^\d+$/.test(s) && Number(s) >= 1 && Number(s) <= 1e9;

/**
 * A token's own limits (besides its tenant's), in a dialog: requests per
 * minute and per day; both empty removes them.
 */
function TokenLimitsButton(props: {
  tenantId: string;
  token: TokenListing;
  saved: (notice: string) => void;
}) {
  const own = props.token.limits;
  const saved = {
    perMinute: String(own?.policies.find((p) => p.window_s === 60)?.limit ?? ''),
    daily: String(own?.quota.daily ?? ''),
  };
  const [open, setOpen] = useState(false);
  const [perMinute, setPerMinute] = useState(saved.perMinute);
  const [daily, setDaily] = useState(saved.daily);
  const [errors, setErrors] = useState<Errors>({});
  const { form, showErrors, showRefusal } = useFormErrors(setErrors);
  // Every opening starts from what is saved: a value refused and then cancelled is gone.
  const show = () => {
    setPerMinute(saved.perMinute);
    setDaily(saved.daily);
    setErrors({});
    setOpen(true);
  };
  const dialog = useModal(open, () => setOpen(false));
  const id = `limits-${props.token.id}`;
  const submit = async (e: Event) => {
    e.preventDefault();
    const found: Errors = {};
    if (perMinute && !isWhole(perMinute)) found['limits.rate'] = 'A whole number from 1, or empty';
    if (daily && !isWhole(daily)) found['limits.daily'] = 'A whole number from 1, or empty';
    if (showErrors(found)) return;
    const limits: TokenLimits | null =
      perMinute || daily
        ? {
            // Other own policies (set through the API) are kept as they are.
            policies: [
              ...(own?.policies.filter((p) => p.window_s !== 60) ?? []),
              ...(perMinute
                ? [{ name: 'per-minute', limit: Number(perMinute), window_s: 60 }]
                : []),
            ],
            quota: { ...own?.quota, daily: daily ? Number(daily) : undefined },
          }
        : null;
    try {
      await api.setTokenLimits(props.tenantId, props.token.id, limits);
      setOpen(false);
      props.saved(
        limits
          ? `Limits of ${props.token.name} saved.`
          : `${props.token.name} has no limits of its own now.`,
      );
    } catch (err) {
      showRefusal(err, ['policies', 'quota']);
    }
  };
  return (
    <>
      <button type="button" onClick={show}>
        Limits of {props.token.name} {props.token.last4}
      </button>
      <dialog ref={dialog.ref} aria-labelledby={`${id}-title`} onClose={dialog.onClose}>
        <form ref={form} method="dialog" onSubmit={submit} noValidate>
          <h2 id={`${id}-title`}>Own limits of {props.token.name}</h2>
          <p class="hint">Counted besides the tenant's. Leave both empty to remove them.</p>
          <FormError errors={errors} />
          <Field
            id={`${id}-rate`}
            name="limits.rate"
            label="Requests per minute"
            inputmode="numeric"
            value={perMinute}
            onValue={setPerMinute}
            error={errors['limits.rate'] ?? errors.policies}
          />
          <Field
            id={`${id}-daily`}
            name="limits.daily"
            label="Requests a day"
            inputmode="numeric"
            value={daily}
            onValue={setDaily}
            error={errors['limits.daily'] ?? errors.quota}
          />
          <div class="actions">
            <button type="button" onClick={() => setOpen(false)}>
              Cancel
            </button>
            <button type="submit" class="primary">
              Save limits
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}

/** Rotate, asking first with the overlap to choose (the old token ends then). */
function RotateButton(props: {
  tenantId: string;
  token: TokenListing;
  rotated: (token: string) => void;
}) {
  const [overlap, setOverlap] = useState(3600);
  const t = props.token;
  const fieldId = `overlap-${t.id}`;
  return (
    <ConfirmButton
      label={`Rotate ${t.name} ${t.last4}`}
      title={`Rotate ${t.name}?`}
      message={
        <>
          <p>
            A new token with the same name, scopes and limits is issued. This one keeps working for
            the overlap you choose, so clients can switch.
          </p>
          <div class="field">
            <label for={fieldId}>The old token keeps working for</label>
            <select
              id={fieldId}
              onChange={(e: Event) => setOverlap(Number((e.target as HTMLSelectElement).value))}
            >
              <Options choices={OVERLAPS} current={overlap} />
            </select>
          </div>
        </>
      }
      confirmLabel="Rotate"
      onConfirm={async () => {
        const r = await api.rotateToken(props.tenantId, t.id, overlap);
        props.rotated(r.token);
      }}
    />
  );
}

/**
 * A partner portal link: a usage:read token in the link (with partner:manage when the
 * partner may approve apps and manage its keys), living as long as chosen, shown once.
 */
function PortalLinkForm(props: {
  tenantId: string;
  made: (label: string, url: string) => void;
  failed: (message: string) => void;
}) {
  const [life, setLife] = useState(900);
  const [manage, setManage] = useState(true);
  return (
    <form
      class="toolbar"
      onSubmit={async (e: Event) => {
        e.preventDefault();
        try {
          const link = await api.portalLink(props.tenantId, life, manage);
          props.made(`A partner portal link (valid until ${fmtTime(link.expires_at)})`, link.url);
        } catch (err) {
          props.failed(refusal(err, [])._form ?? 'Failed');
        }
      }}
    >
      <label for="portal-link-life">Partner portal link, valid for</label>
      <select
        id="portal-link-life"
        onChange={(e: Event) => setLife(Number((e.target as HTMLSelectElement).value))}
      >
        <Options choices={LINK_LIVES} current={life} />
      </select>
      <label class="inline">
        <input
          type="checkbox"
          checked={manage}
          onChange={(e: Event) => setManage((e.target as HTMLInputElement).checked)}
        />{' '}
        lets the partner approve apps and manage its keys
      </label>
      <button type="submit">Create a partner portal link</button>
    </form>
  );
}
