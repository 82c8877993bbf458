/** A tenant's limits: what remains now of each policy and quota, and (admin) the editor. */
import { useEffect, useRef, useState } from 'hono/jsx/dom';
import type { Limits, TenantUsage, TokenListing } from '../../src/types/wire';
import { api } from './api';
import {
  ConfirmButton,
  type Errors,
  Field,
  FormError,
  focusFirstError,
  Notice,
  refusal,
} from './form';

interface PolicyDraft {
  name: string;
  limit: string;
  window_s: string;
  algorithm: 'sliding' | 'fixed';
}

const seconds = (s: number) =>
  s >= 86_400 && s % 86_400 === 0
    ? `${s / 86_400} d`
    : s >= 3600 && s % 3600 === 0
      ? `${s / 3600} h`
      : s >= 60 && s % 60 === 0
        ? `${s / 60} min`
        : `${s} s`;

export function LimitsSection(props: { tenantId: string; canChange: boolean }) {
  const [usage, setUsage] = useState<TenantUsage | null>(null);
  const [error, setError] = useState('');
  const [reload, setReload] = useState(0);
  // Tokens with limits of their own, whose meters can be shown beside the tenant's.
  const [metered, setMetered] = useState<TokenListing[]>([]);
  const [tokenId, setTokenId] = useState('');

  useEffect(() => {
    api
      .usage(props.tenantId, tokenId || undefined)
      .then(setUsage)
      .catch((err: unknown) => setError(refusal(err, [])._form ?? 'Failed'));
  }, [props.tenantId, tokenId, reload]);

  useEffect(() => {
    api
      .tokens(props.tenantId)
      .then((r) => setMetered(r.tokens.filter((t) => t.limits && !t.revoked_at)))
      .catch(() => setMetered([]));
  }, [props.tenantId]);

  if (error) {
    return (
      <p class="form-error" role="alert">
        {error}
      </p>
    );
  }
  if (!usage) return <p class="loading">Loading…</p>;
  return (
    <section aria-labelledby="limits-title">
      <h2 id="limits-title">Limits</h2>
      <p>
        {usage.custom ? 'This tenant has its own limits.' : 'This tenant has the default limits.'}{' '}
        Mode: <strong>{usage.limits.limiter ?? 'leased'}</strong>.{' '}
        <button type="button" class="link" onClick={() => setReload(reload + 1)}>
          Refresh
        </button>
      </p>
      {metered.length > 0 ? (
        <div class="toolbar">
          <label for="meters-token">Also the own limits of</label>
          <select
            id="meters-token"
            onChange={(e: Event) => setTokenId((e.target as HTMLSelectElement).value)}
          >
            <option value="" selected={tokenId === ''}>
              no token
            </option>
            {metered.map((t) => (
              <option value={t.id} selected={tokenId === t.id}>
                {t.name} …{t.last4}
              </option>
            ))}
          </select>
        </div>
      ) : null}
      <table class="grid">
        <caption>What remains now</caption>
        <thead>
          <tr>
            <th scope="col">Policy or quota</th>
            <th scope="col">Limit</th>
            <th scope="col">Window</th>
            <th scope="col">Used</th>
            <th scope="col">Remaining</th>
            <th scope="col">Resets in</th>
          </tr>
        </thead>
        <tbody data-testid="meters">
          {usage.meters.map((m) => (
            <tr key={m.name}>
              <th scope="row">
                {m.name} <span class="hint">({m.kind})</span>
              </th>
              <td>{m.limit}</td>
              <td>{seconds(m.window_s)}</td>
              <td>{m.used}</td>
              <td>
                <meter
                  min={0}
                  max={m.limit}
                  value={m.remaining}
                  aria-label={`${m.name} remaining`}
                />{' '}
                {m.remaining}
              </td>
              <td>{seconds(m.reset_s)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {props.canChange ? (
        <LimitsForm
          tenantId={props.tenantId}
          limits={usage.limits}
          custom={usage.custom}
          saved={() => setReload(reload + 1)}
        />
      ) : null}
    </section>
  );
}

const NAME = /^[a-z][a-z0-9_-]{0,31}$/;
const RESERVED = /^(daily|monthly)$|-(daily|monthly|browser|token)$/;
const isCount = (s: string) => /^\d+$/.test(s) && Number(s) >= 1 && Number(s) <= 1e9;

function LimitsForm(props: {
  tenantId: string;
  limits: Limits;
  custom: boolean;
  saved: () => void;
}) {
  const [policies, setPolicies] = useState<PolicyDraft[]>(
    props.limits.policies.map((p) => ({
      name: p.name,
      limit: String(p.limit),
      window_s: String(p.window_s),
      algorithm: p.algorithm ?? 'sliding',
    })),
  );
  const [daily, setDaily] = useState(String(props.limits.quota.daily ?? ''));
  const [monthly, setMonthly] = useState(String(props.limits.quota.monthly ?? ''));
  const [mode, setMode] = useState(props.limits.limiter ?? 'leased');
  const [errors, setErrors] = useState<Errors>({});
  const [notice, setNotice] = useState('');
  const form = useRef<HTMLFormElement>(null);

  const edit = (i: number, patch: Partial<PolicyDraft>) =>
    setPolicies(policies.map((p, j) => (j === i ? { ...p, ...patch } : p)));

  const submit = async (e: Event) => {
    e.preventDefault();
    setNotice('');
    const found: Errors = {};
    const names = new Set<string>();
    policies.forEach((p, i) => {
      if (!NAME.test(p.name) || RESERVED.test(p.name)) {
        found[`policies.${i}.name`] =
          'Lower-case letters, digits, _ or -, from a letter; not a reserved name';
      } else if (names.has(p.name)) found[`policies.${i}.name`] = 'Names must be unique';
      names.add(p.name);
      if (!isCount(p.limit)) found[`policies.${i}.limit`] = 'A whole number from 1 to 10⁹';
      if (!(isCount(p.window_s) && Number(p.window_s) <= 31 * 86_400)) {
        found[`policies.${i}.window_s`] = 'Seconds, from 1 to 31 days';
      }
    });
    if (daily && !isCount(daily)) found['quota.daily'] = 'A whole number from 1, or empty';
    if (monthly && !isCount(monthly)) found['quota.monthly'] = 'A whole number from 1, or empty';
    setErrors(found);
    if (Object.keys(found).length > 0) return focusFirstError(form.current, found);
    const limits: Limits = {
      policies: policies.map((p) => ({
        name: p.name,
        limit: Number(p.limit),
        window_s: Number(p.window_s),
        algorithm: p.algorithm,
      })),
      quota: {
        ...(daily ? { daily: Number(daily) } : {}),
        ...(monthly ? { monthly: Number(monthly) } : {}),
        ...(props.limits.quota.groups ? { groups: props.limits.quota.groups } : {}),
      },
      limiter: mode,
    };
    try {
      await api.setLimits(props.tenantId, limits);
      setNotice('Limits saved: they hold from the next request.');
      props.saved();
    } catch (err) {
      const fields = [
        ...policies.flatMap((_, i) =>
          ['name', 'limit', 'window_s'].map((f) => `policies.${i}.${f}`),
        ),
        'quota.daily',
        'quota.monthly',
      ];
      const found = refusal(err, fields);
      setErrors(found);
      focusFirstError(form.current, found);
    }
  };

  return (
    <form ref={form} class="card" onSubmit={submit} noValidate aria-labelledby="limits-edit-title">
      <h3 id="limits-edit-title">Change the limits</h3>
      <FormError errors={errors} />
      {notice ? <Notice text={notice} /> : null}
      <fieldset>
        <legend>Rate policies (at most 8)</legend>
        {policies.map((p, i) => (
          <div class="row" key={i}>
            <Field
              id={`p${i}-name`}
              name={`policies.${i}.name`}
              label="Name"
              value={p.name}
              onValue={(v) => edit(i, { name: v })}
              error={errors[`policies.${i}.name`]}
            />
            <Field
              id={`p${i}-limit`}
              name={`policies.${i}.limit`}
              label="Requests"
              inputmode="numeric"
              value={p.limit}
              onValue={(v) => edit(i, { limit: v })}
              error={errors[`policies.${i}.limit`]}
            />
            <Field
              id={`p${i}-window`}
              name={`policies.${i}.window_s`}
              label="Window (s)"
              inputmode="numeric"
              value={p.window_s}
              onValue={(v) => edit(i, { window_s: v })}
              error={errors[`policies.${i}.window_s`]}
            />
            <div class="field">
              <label for={`p${i}-alg`}>Counting</label>
              <select
                id={`p${i}-alg`}
                onChange={(e: Event) =>
                  edit(i, {
                    algorithm: (e.target as HTMLSelectElement).value as 'sliding' | 'fixed',
                  })
                }
              >
                <option value="sliding" selected={p.algorithm === 'sliding'}>
                  sliding
                </option>
                <option value="fixed" selected={p.algorithm === 'fixed'}>
                  fixed
                </option>
              </select>
            </div>
            <button type="button" onClick={() => setPolicies(policies.filter((_, j) => j !== i))}>
              Remove {p.name || `policy ${i + 1}`}
            </button>
          </div>
        ))}
        {policies.length < 8 ? (
          <button
            type="button"
            onClick={() =>
              setPolicies([
                ...policies,
                { name: '', limit: '', window_s: '60', algorithm: 'sliding' },
              ])
            }
          >
            Add a policy
          </button>
        ) : null}
      </fieldset>
      <fieldset>
        <legend>Quotas (UTC day and month)</legend>
        <div class="row">
          <Field
            id="quota-daily"
            name="quota.daily"
            label="Requests a day"
            inputmode="numeric"
            value={daily}
            onValue={setDaily}
            error={errors['quota.daily']}
          />
          <Field
            id="quota-monthly"
            name="quota.monthly"
            label="Requests a month"
            inputmode="numeric"
            value={monthly}
            onValue={setMonthly}
            error={errors['quota.monthly']}
          />
        </div>
      </fieldset>
      <fieldset>
        <legend>Mode</legend>
        {(['leased', 'exact'] as const).map((m) => (
          <label class="check">
            <input
              type="radio"
              name="limiter"
              value={m}
              checked={mode === m}
              onChange={() => setMode(m)}
            />
            {m === 'leased'
              ? 'leased (fast; may overshoot by a lease)'
              : 'exact (every request asks the tenant’s guard)'}
          </label>
        ))}
      </fieldset>
      <div class="actions">
        <button type="submit" class="primary">
          Save limits
        </button>
        {props.custom ? (
          <ConfirmButton
            label="Reset to defaults"
            title="Reset to the default limits?"
            message="The tenant's own limits are removed; the gateway's defaults hold from the next request."
            confirmLabel="Reset"
            onConfirm={async () => {
              await api.resetLimits(props.tenantId);
              props.saved();
            }}
          />
        ) : null}
      </div>
    </form>
  );
}
