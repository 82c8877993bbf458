/**
 * The editor of a set of limits (admin only): rate policies, the daily and monthly
 * quotas, quotas per operation group, and the mode. A tenant's own limits and a plan
 * use it alike (PUT .../limits, PUT /admin/plans/{name}: the same body). The
 * browser checks the API's bounds first (src/metering/policy.ts); what the API still
 * refuses lands next to the field it names.
 */
import type { Child } from 'hono/jsx';
import { useState } from 'hono/jsx/dom';
import type { Limits } from '../../src/types/wire';
import { type Errors, Field, FormError, Notice, Options, useFormErrors } from './form';

interface PolicyDraft {
  name: string;
  limit: string;
  window_s: string;
  algorithm: 'sliding' | 'fixed';
}

/** A policy's text fields, in the order a row shows them (id: the field id's last part). */
const POLICY_FIELDS = [
  { key: 'name', id: 'name', label: 'Name', inputmode: undefined },
  { key: 'limit', id: 'limit', label: 'Requests', inputmode: 'numeric' },
  { key: 'window_s', id: 'window', label: 'Window (s)', inputmode: 'numeric' },
] as const;
/** [label, value], as Options takes them. */
const ALGORITHMS = [
  ['sliding', 'sliding'],
  ['fixed', 'fixed'],
] as const;

interface GroupDraft {
  group: string;
  daily: string;
  monthly: string;
}

type Period = 'daily' | 'monthly';
const PERIODS = [
  ['daily', 'a day'],
  ['monthly', 'a month'],
] as const;

/** A quota's two fields, a day's and a month's: ids `${id}-daily`, names `${name}.daily`. */
function QuotaFields(p: {
  id: string;
  name: string;
  /** What is counted, the label's first word(s): "Requests" a day. */
  subject: string;
  values: Record<Period, string>;
  onValue: (period: Period, v: string) => void;
  errors: Errors;
}) {
  return (
    <>
      {PERIODS.map(([period, span]) => (
        <Field
          id={`${p.id}-${period}`}
          name={`${p.name}.${period}`}
          label={`${p.subject} ${span}`}
          inputmode="numeric"
          value={p.values[period]}
          onValue={(v) => p.onValue(period, v)}
          error={p.errors[`${p.name}.${period}`]}
        />
      ))}
    </>
  );
}

const NAME = /^[a-z][a-z0-9_-]{0,31}$/;
const RESERVED = /^(daily|monthly|self-service)$|-(daily|monthly|browser|token)$/;
const isCount = (s: string) => /^\d+$/.test(s) && Number(s) >= 1 && Number(s) <= 1e9;
const amount = (s: string) => (s ? Number(s) : undefined);

/** What the two modes do (docs/LIMITS.md, "Leased and exact admission"). */
export const MODES = {
  leased:
    'leased: isolates admit from short leases; never over a limit, and changes reach every isolate within 1 s',
  exact: 'exact: every request asks the tenant’s guard (one call per request)',
} as const;

export function LimitsEditor(props: {
  /** Prefixes the fields' ids, so two editors on one page do not clash. */
  id: string;
  title: string;
  /** What saving does, said under the title (which limits win). */
  hint?: string;
  limits: Limits;
  /** Operation groups that may have quotas of their own. */
  quotaGroups: readonly string[];
  saveLabel: string;
  save: (limits: Limits) => Promise<string>;
  /** More actions beside the save button (reset, remove). */
  children?: Child;
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
  const [groups, setGroups] = useState<GroupDraft[]>(
    Object.entries(props.limits.quota.groups ?? {}).map(([group, q]) => ({
      group,
      daily: String(q?.daily ?? ''),
      monthly: String(q?.monthly ?? ''),
    })),
  );
  const [mode, setMode] = useState(props.limits.limiter ?? 'leased');
  const [errors, setErrors] = useState<Errors>({});
  const [notice, setNotice] = useState('');
  const { form, showErrors, showRefusal } = useFormErrors(setErrors);
  const id = props.id;

  const edit = (i: number, patch: Partial<PolicyDraft>) =>
    setPolicies(policies.map((p, j) => (j === i ? { ...p, ...patch } : p)));
  const editGroup = (i: number, patch: Partial<GroupDraft>) =>
    setGroups(groups.map((g, j) => (j === i ? { ...g, ...patch } : g)));
  const unused = props.quotaGroups.filter((g) => !groups.some((d) => d.group === g));

  const check = (): Errors => {
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
    for (const g of groups) {
      for (const period of ['daily', 'monthly'] as const) {
        if (g[period] && !isCount(g[period])) {
          found[`quota.groups.${g.group}.${period}`] = 'A whole number from 1, or empty';
        }
      }
    }
    return found;
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    setNotice('');
    const found = check();
    if (showErrors(found)) return;
    const groupQuotas: NonNullable<Limits['quota']['groups']> = {};
    for (const g of groups) {
      const q = { daily: amount(g.daily), monthly: amount(g.monthly) };
      if (q.daily || q.monthly) {
        Object.assign(groupQuotas, {
          [g.group]: {
            ...(q.daily ? { daily: q.daily } : {}),
            ...(q.monthly ? { monthly: q.monthly } : {}),
          },
        });
      }
    }
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
        ...(Object.keys(groupQuotas).length > 0 ? { groups: groupQuotas } : {}),
      },
      limiter: mode,
    };
    try {
      setNotice(await props.save(limits));
    } catch (err) {
      const fields = [
        ...policies.flatMap((_, i) =>
          ['name', 'limit', 'window_s'].map((f) => `policies.${i}.${f}`),
        ),
        ...groups.flatMap((g) => ['daily', 'monthly'].map((p) => `quota.groups.${g.group}.${p}`)),
        'quota.daily',
        'quota.monthly',
      ];
      showRefusal(err, fields);
    }
  };

  return (
    <form ref={form} class="card" onSubmit={submit} noValidate aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>{props.title}</h3>
      {props.hint ? <p class="hint">{props.hint}</p> : null}
      <FormError errors={errors} />
      {notice ? <Notice text={notice} /> : null}
      <fieldset>
        <legend>Rate policies (at most 8)</legend>
        {policies.map((p, i) => (
          <div class="row" key={i}>
            {POLICY_FIELDS.map((f) => (
              <Field
                id={`${id}-p${i}-${f.id}`}
                name={`policies.${i}.${f.key}`}
                label={f.label}
                inputmode={f.inputmode}
                value={p[f.key]}
                onValue={(v) => edit(i, { [f.key]: v })}
                error={errors[`policies.${i}.${f.key}`]}
              />
            ))}
            <div class="field">
              <label for={`${id}-p${i}-alg`}>Counting</label>
              <select
                id={`${id}-p${i}-alg`}
                onChange={(e: Event) =>
                  edit(i, {
                    algorithm: (e.target as HTMLSelectElement).value as 'sliding' | 'fixed',
                  })
                }
              >
                <Options choices={ALGORITHMS} current={p.algorithm} />
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
          <QuotaFields
            id={`${id}-quota`}
            name="quota"
            subject="Requests"
            values={{ daily, monthly }}
            onValue={(period, v) => (period === 'daily' ? setDaily : setMonthly)(v)}
            errors={errors}
          />
        </div>
      </fieldset>
      <fieldset>
        <legend>Quotas of an operation group (counted besides the tenant's)</legend>
        {groups.map((g, i) => (
          <div class="row" key={g.group}>
            <QuotaFields
              id={`${id}-g-${g.group}`}
              name={`quota.groups.${g.group}`}
              subject={`${g.group}:`}
              values={g}
              onValue={(period, v) => editGroup(i, { [period]: v })}
              errors={errors}
            />
            <button type="button" onClick={() => setGroups(groups.filter((_, j) => j !== i))}>
              Remove the {g.group} quota
            </button>
          </div>
        ))}
        {unused.length > 0 ? (
          <div class="row">
            <div class="field">
              <label for={`${id}-add-group`}>Add a quota for</label>
              <select id={`${id}-add-group`}>
                {unused.map((g) => (
                  <option value={g}>{g}</option>
                ))}
              </select>
            </div>
            <button
              type="button"
              onClick={() => {
                const picked = form.current?.querySelector<HTMLSelectElement>(`#${id}-add-group`);
                const group = picked?.value ?? unused[0];
                if (group) setGroups([...groups, { group, daily: '', monthly: '' }]);
              }}
            >
              Add group quota
            </button>
          </div>
        ) : null}
      </fieldset>
      <fieldset>
        <legend>Mode</legend>
        {(['leased', 'exact'] as const).map((m) => (
          <label class="check">
            <input
              type="radio"
              name={`${id}-limiter`}
              value={m}
              checked={mode === m}
              onChange={() => setMode(m)}
            />
            {MODES[m]}
          </label>
        ))}
      </fieldset>
      <div class="actions">
        <button type="submit" class="primary">
          {props.saveLabel}
        </button>
        {props.children}
      </div>
    </form>
  );
}
