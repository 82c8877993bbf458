/**
 * What a tenant's partner may grant (docs/OAUTH.md, "Settings"; GET and PUT
 * /admin/tenants/{id}/partner-access): the most an OAuth grant or a partner key may hold,
 * whether apps that registered themselves may be approved, how many keys the partner may
 * have at once, and the own limits each new grant gets.
 */
import { useEffect, useState } from 'hono/jsx/dom';
import type { PartnerAccess, TokenLimits } from '../../src/types/wire';
import { api } from './api';
import { type Errors, Field, FormError, Notice, refusal, useFormErrors } from './form';

/** A whole number from 1, or null for an empty field; NaN for anything else. */
const whole = (text: string) =>
  text.trim() === '' ? null : /^\d+$/.test(text.trim()) && Number(text) > 0 ? Number(text) : NaN;

/** The form's number fields: the API's field name, the draft's key. */
const COUNT_FIELDS = [
  { id: 'pa-max-keys', name: 'max_keys', draft: 'maxKeys', label: 'Partner keys at once' },
  {
    id: 'pa-per-minute',
    name: 'per_minute',
    draft: 'perMinute',
    label: 'Each new grant: requests per minute (optional)',
  },
  {
    id: 'pa-per-day',
    name: 'per_day',
    draft: 'perDay',
    label: 'Each new grant: requests per day (optional)',
  },
] as const;

function limitsOf(perMinute: number | null, perDay: number | null): TokenLimits | null {
  if (perMinute === null && perDay === null) return null;
  return {
    policies: perMinute ? [{ name: 'per-minute', limit: perMinute, window_s: 60 }] : [],
    quota: perDay ? { daily: perDay } : {},
  };
}

export function PartnerAccessSection(props: { tenantId: string; canChange: boolean }) {
  const [access, setAccess] = useState<PartnerAccess | null>(null);
  const [draft, setDraft] = useState({
    scopes: '',
    dynamic: true,
    maxKeys: '',
    perMinute: '',
    perDay: '',
  });
  const [errors, setErrors] = useState<Errors>({});
  const [notice, setNotice] = useState('');
  const { form, showErrors, showRefusal } = useFormErrors(setErrors);

  const show = (a: PartnerAccess) => {
    setAccess(a);
    const minute = a.grant_limits?.policies.find((p) => p.window_s === 60)?.limit;
    setDraft({
      scopes: a.grantable_scopes.join(' '),
      dynamic: a.dynamic_clients,
      maxKeys: String(a.max_keys),
      perMinute: minute ? String(minute) : '',
      perDay: a.grant_limits?.quota.daily ? String(a.grant_limits.quota.daily) : '',
    });
  };
  useEffect(() => {
    api
      .partnerAccess(props.tenantId)
      .then(show)
      .catch((err: unknown) => setErrors(refusal(err, [])));
  }, [props.tenantId]);

  const submit = async (e: Event) => {
    e.preventDefault();
    setNotice('');
    const found: Errors = {};
    const scopes = draft.scopes.split(/[\s,]+/).filter(Boolean);
    const maxKeys = whole(draft.maxKeys);
    const perMinute = whole(draft.perMinute);
    const perDay = whole(draft.perDay);
    if (!/^\d+$/.test(draft.maxKeys.trim())) found.max_keys = 'A whole number from 0';
    if (Number.isNaN(perMinute)) found.per_minute = 'A whole number from 1, or empty';
    if (Number.isNaN(perDay)) found.per_day = 'A whole number from 1, or empty';
    if (showErrors(found)) return;
    try {
      const saved = await api.setPartnerAccess(props.tenantId, {
        grantable_scopes: scopes,
        dynamic_clients: draft.dynamic,
        max_keys: maxKeys ?? 0,
        grant_limits: limitsOf(perMinute, perDay),
      });
      show(saved);
      setNotice('Saved: it holds for the next consent and the next key; grants made keep theirs.');
    } catch (err) {
      showRefusal(err, ['grantable_scopes', 'max_keys']);
    }
  };

  return (
    <section aria-labelledby="partner-access-title">
      <h2 id="partner-access-title">Partner access: apps and keys</h2>
      <p class="hint">
        What this tenant's partner may grant, in the partner portal: to apps through OAuth consent,
        and to keys of its own (docs/OAUTH.md).
      </p>
      {access && !props.canChange ? (
        <dl>
          <dt>May grant at most</dt>
          <dd>
            <code>{access.grantable_scopes.join(' ') || 'nothing'}</code>
          </dd>
          <dt>Apps that registered themselves</dt>
          <dd>{access.dynamic_clients ? 'may be approved' : 'refused'}</dd>
          <dt>Partner keys at once</dt>
          <dd>{access.max_keys}</dd>
        </dl>
      ) : null}
      {access && props.canChange ? (
        <form ref={form} onSubmit={submit} noValidate>
          <FormError errors={errors} />
          <Field
            id="pa-scopes"
            name="grantable_scopes"
            label="May grant at most (scopes or presets, space-separated)"
            value={draft.scopes}
            onValue={(v) => setDraft({ ...draft, scopes: v })}
            error={errors.grantable_scopes}
            hint="full (default) never includes apikeys:* or token:rotate: name them to allow them. Empty: nothing can be granted."
          />
          <label class="inline">
            <input
              type="checkbox"
              name="dynamic_clients"
              checked={draft.dynamic}
              onChange={(e: Event) =>
                setDraft({ ...draft, dynamic: (e.target as HTMLInputElement).checked })
              }
            />{' '}
            Apps that registered themselves may be approved
          </label>
          {COUNT_FIELDS.map((f) => (
            <Field
              id={f.id}
              name={f.name}
              label={f.label}
              inputmode="numeric"
              value={draft[f.draft]}
              onValue={(v) => setDraft({ ...draft, [f.draft]: v })}
              error={errors[f.name]}
            />
          ))}
          <button type="submit">Save partner access</button>
          {notice ? <Notice text={notice} /> : null}
        </form>
      ) : null}
      {!access ? <FormError errors={errors} /> : null}
    </section>
  );
}
