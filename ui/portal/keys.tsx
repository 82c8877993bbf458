/**
 * The partner's own keys (GET, POST /partner/keys; DELETE /partner/keys/{id}): server
 * tokens for its own apps, each named, scoped within what its account may grant, with
 * optional limits within the account's, up to the count the operator allows. A new key
 * is shown once with a copy button; each key says when it was last used and who made it.
 */
import { useEffect, useState } from 'hono/jsx/dom';
import { ApiError, call } from '../lib/api';
import { fmtTime } from '../lib/format';
import { ColumnHeads } from '../lib/table';
import { RevokeCell, RevokeDialog } from './revoke-dialog';
import { messageOf } from './rotate';
import type { CreatedPartnerKey, PartnerKey, PartnerKeys } from './types';

const LIFETIMES = [
  ['', 'until revoked'],
  ['30', '30 days'],
  ['90', '90 days'],
  ['365', 'a year'],
] as const;

/** A whole number from 1, or null for an empty field; NaN for anything else. */
const whole = (text: string) =>
  text.trim() === '' ? null : /^\d+$/.test(text.trim()) && Number(text) > 0 ? Number(text) : NaN;

export function Keys(props: { token: string }) {
  const [state, setState] = useState<PartnerKeys | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [fields, setFields] = useState<Record<string, string>>({});
  const [made, setMade] = useState<CreatedPartnerKey | null>(null);
  const [copied, setCopied] = useState('');
  const [revoking, setRevoking] = useState<PartnerKey | null>(null);
  const auth = { authorization: `Bearer ${props.token}` };

  const load = () =>
    call<PartnerKeys>('/partner/keys', { headers: auth })
      .then(setState)
      .catch((err) => setError(messageOf(err)));
  useEffect(() => {
    void load();
  }, [props.token]);

  const create = async (e: Event) => {
    e.preventDefault();
    const form = e.target as HTMLFormElement;
    const value = (name: string) =>
      (form.elements.namedItem(name) as HTMLInputElement | HTMLSelectElement).value;
    const perMinute = whole(value('per_minute'));
    const perDay = whole(value('per_day'));
    const problems: Record<string, string> = {};
    if (!value('name').trim()) problems.name = 'Name the key';
    if (Number.isNaN(perMinute)) problems.limits = 'A limit is a whole number from 1';
    if (Number.isNaN(perDay)) problems.limits = 'A limit is a whole number from 1';
    setFields(problems);
    if (Object.keys(problems).length > 0) return;
    const days = value('expires_in_days');
    const limits =
      perMinute || perDay
        ? {
            policies: perMinute ? [{ name: 'per-minute', limit: perMinute, window_s: 60 }] : [],
            quota: perDay ? { daily: perDay } : {},
          }
        : undefined;
    try {
      const key = await call<CreatedPartnerKey>('/partner/keys', {
        method: 'POST',
        headers: auth,
        body: {
          name: value('name').trim(),
          scopes: value('scopes')
            .split(/[\s,]+/)
            .filter(Boolean),
          ...(days ? { expires_in_days: Number(days) } : {}),
          ...(limits ? { limits } : {}),
        },
      });
      form.reset();
      setError(null);
      setMade(key);
      setCopied('');
      await load();
      document.getElementById('new-key')?.focus();
    } catch (err) {
      if (err instanceof ApiError && Object.keys(err.fields).length > 0) {
        setFields(
          Object.fromEntries(
            Object.entries(err.fields).map(([f, m]) => [f.startsWith('limits') ? 'limits' : f, m]),
          ),
        );
      } else setError(messageOf(err));
    }
  };

  const revoke = async () => {
    const key = revoking;
    setRevoking(null);
    if (!key) return;
    try {
      await call(`/partner/keys/${encodeURIComponent(key.id)}`, {
        method: 'DELETE',
        headers: auth,
      });
      await load();
    } catch (err) {
      setError(messageOf(err));
    }
  };

  const copy = async () => {
    if (!made) return;
    try {
      await navigator.clipboard.writeText(made.token);
      setCopied('Copied to the clipboard.');
    } catch {
      setCopied('The browser refused the clipboard: select the key and copy it.');
    }
  };

  const working = state?.keys.filter((k) => !k.revoked_at).length ?? 0;
  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">Your keys</h2>
      <p class="hint">
        Server tokens for your own apps: {working} working of at most {state?.max_keys ?? '…'}. They
        may hold at most <code>{state?.grantable_scopes.join(' ') ?? '…'}</code>.
      </p>
      <p class="error" role="alert">
        {error ?? ''}
      </p>
      {made && (
        <div class="once" role="status">
          <p>
            <strong>Your new key "{made.name}", shown only this once.</strong>
          </p>
          <label for="new-key">New key</label>
          <div class="row">
            <input id="new-key" readonly value={made.token} size={60} />
            <button type="button" onClick={copy}>
              Copy
            </button>
          </div>
          <p aria-live="polite">{copied}</p>
          <button type="button" onClick={() => setMade(null)}>
            I have saved it
          </button>
        </div>
      )}
      {state && state.keys.length > 0 && (
        <table data-testid="keys">
          <caption class="visually-hidden">Each key you made</caption>
          <ColumnHeads names={['Name', 'Key', 'Scopes', 'Expires', 'Last used', 'State']} />
          <tbody>
            {state.keys.map((k) => (
              <tr>
                <th scope="row">{k.name}</th>
                <td>
                  <code>
                    {k.prefix}…{k.last4}
                  </code>
                </td>
                <td>
                  <code>{k.scopes.join(' ')}</code>
                </td>
                <td>{k.expires_at ? fmtTime(k.expires_at) : 'never'}</td>
                <td>{fmtTime(k.last_used_at)}</td>
                <RevokeCell
                  name={k.name}
                  revokedAt={k.revoked_at}
                  onRevoke={() => setRevoking(k)}
                />
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form onSubmit={create} noValidate>
        <h3>Make a key</h3>
        <label for="key-name">Name</label>
        <input
          id="key-name"
          name="name"
          maxLength={64}
          aria-invalid={fields.name ? 'true' : 'false'}
          aria-describedby="key-name-error"
        />
        <p id="key-name-error" class="error" role="alert">
          {fields.name ?? ''}
        </p>
        <label for="key-scopes">Scopes</label>
        <input
          id="key-scopes"
          name="scopes"
          value={state?.grantable_scopes.join(' ') ?? ''}
          aria-invalid={fields.scopes ? 'true' : 'false'}
          aria-describedby="key-scopes-hint key-scopes-error"
        />
        <p id="key-scopes-hint" class="hint">
          Space-separated: presets (<code>full</code>, <code>read-only</code>) or scopes such as{' '}
          <code>teams:read</code>, within what your account may grant.
        </p>
        <p id="key-scopes-error" class="error" role="alert">
          {fields.scopes ?? ''}
        </p>
        <label for="key-expiry">Works</label>
        <select id="key-expiry" name="expires_in_days">
          {LIFETIMES.map(([days, label]) => (
            <option value={days}>{label}</option>
          ))}
        </select>
        <div class="row">
          <label class="inline" for="key-per-minute">
            Requests per minute (optional)
          </label>
          <input id="key-per-minute" name="per_minute" inputMode="numeric" />
          <label class="inline" for="key-per-day">
            Requests per day (optional)
          </label>
          <input id="key-per-day" name="per_day" inputMode="numeric" />
        </div>
        <p id="key-limits-error" class="error" role="alert">
          {fields.limits ?? ''}
        </p>
        <button type="submit">Make the key</button>
      </form>
      <RevokeDialog
        name={revoking?.name ?? null}
        id="key-revoke-title"
        message="It stops working within a second, for good."
        onCancel={() => setRevoking(null)}
        onConfirm={revoke}
      />
    </section>
  );
}
