/**
 * Plans: named limits that tenants are on (GET /admin/plans). A change reaches every
 * tenant on the plan before the page says it is saved (PUT /admin/plans/{name});
 * an admin makes, edits and removes plans, a viewer sees them.
 */
import { useEffect, useState } from 'hono/jsx/dom';
import type { Limits, Plan } from '../../src/types/wire';
import { duration, fmtTime, plural } from '../lib/format';
import { ColumnHeads } from '../lib/table';
import { api } from './api';
import { ConfirmButton, Field, Notice, PageError, refusal } from './form';
import { LimitsEditor } from './limits-editor';

const PLAN_NAME = /^[a-z][a-z0-9_-]{0,31}$/;
const STARTER: Limits = {
  policies: [{ name: 'burst', limit: 20, window_s: 10 }],
  quota: { daily: 10_000 },
};

/** "burst 20 per 10 s, sustained 600 per 1 min; 10,000 a day" */
export function limitsSummary(l: Limits): string {
  const parts = l.policies.map(
    (p) =>
      `${p.name} ${p.limit} per ${duration(p.window_s)}${p.algorithm === 'fixed' ? ' (fixed)' : ''}`,
  );
  const quotas: string[] = [];
  if (l.quota.daily) quotas.push(`${l.quota.daily.toLocaleString('en')} a day`);
  if (l.quota.monthly) quotas.push(`${l.quota.monthly.toLocaleString('en')} a month`);
  for (const [group, q] of Object.entries(l.quota.groups ?? {})) {
    if (q?.daily) quotas.push(`${group} ${q.daily.toLocaleString('en')} a day`);
    if (q?.monthly) quotas.push(`${group} ${q.monthly.toLocaleString('en')} a month`);
  }
  return [parts.join(', '), quotas.join(', ')].filter(Boolean).join('; ') || 'no limits';
}

export function PlansPage(props: { canChange: boolean }) {
  const [plans, setPlans] = useState<Plan[] | null>(null);
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const [editing, setEditing] = useState<string | null>(null);
  const [reload, setReload] = useState(0);
  const [quotaGroups, setQuotaGroups] = useState<readonly string[]>([]);

  useEffect(() => {
    api
      .plans()
      .then((r) => setPlans(r.plans))
      .catch((err: unknown) => setError(refusal(err, [])._form ?? 'Failed'));
  }, [reload]);
  useEffect(() => {
    api.operations().then(
      (o) => setQuotaGroups(o.quota_groups),
      () => setQuotaGroups([]),
    );
  }, []);

  const saved = (text: string) => {
    setNotice(text);
    setEditing(null);
    setReload(reload + 1);
  };
  const reached = (p: Plan) =>
    `Plan ${p.name} saved: ${p.tenants} tenant${p.tenants === 1 ? '' : 's'} on it${
      p.pending ? `, ${p.pending} not reached yet (retried)` : ', each has it now'
    }.`;

  return (
    <section aria-labelledby="plans-title">
      <h1 id="plans-title">Plans</h1>
      <p>
        A plan is a set of limits that tenants are on: change it here and every tenant on it has the
        new limits from its next request (within 1 s everywhere). A tenant's own limits still win
        over its plan's. Tenants join a plan on their Limits tab.
      </p>
      <PageError error={error} />
      {notice ? <Notice text={notice} /> : null}
      {plans === null ? (
        <p class="loading">Loading…</p>
      ) : (
        <table class="grid">
          <caption>{plans.length === 0 ? 'No plans yet.' : plural(plans.length, 'plan')}</caption>
          <ColumnHeads
            names={['Plan', 'Limits', 'Mode', 'Tenants', 'Changed', props.canChange && 'Actions']}
          />
          <tbody data-testid="plan-rows">
            {plans.map((p) => (
              <tr key={p.name} data-plan={p.name}>
                <th scope="row">{p.name}</th>
                <td>{limitsSummary(p.limits)}</td>
                <td>{p.limits.limiter ?? 'leased'}</td>
                <td>
                  {p.tenants}
                  {p.pending ? <span class="hint"> ({p.pending} pending)</span> : null}
                </td>
                <td>
                  {fmtTime(p.updated_at)}
                  <br />
                  <span class="hint">by {p.updated_by}</span>
                </td>
                {props.canChange ? (
                  <td class="row-actions">
                    <button type="button" onClick={() => setEditing(p.name)}>
                      Edit {p.name}
                    </button>
                    {p.tenants === 0 ? (
                      <ConfirmButton
                        label={`Remove ${p.name}`}
                        title={`Remove plan ${p.name}?`}
                        message="No tenant is on it. It is removed for good."
                        confirmLabel="Remove"
                        danger
                        onConfirm={async () => {
                          await api.removePlan(p.name);
                          saved(`Plan ${p.name} removed.`);
                        }}
                      />
                    ) : null}
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {props.canChange && editing
        ? (() => {
            const plan = plans?.find((p) => p.name === editing);
            return plan ? (
              <LimitsEditor
                key={`edit-${editing}`}
                id={`plan-${editing}`}
                title={`Plan ${editing}`}
                limits={plan.limits}
                quotaGroups={quotaGroups}
                saveLabel={`Save ${editing} for its ${plural(plan.tenants, 'tenant')}`}
                save={async (limits) => {
                  saved(reached(await api.setPlan(editing, limits)));
                  return '';
                }}
              >
                <button type="button" onClick={() => setEditing(null)}>
                  Cancel
                </button>
              </LimitsEditor>
            ) : null;
          })()
        : null}
      {props.canChange && !editing ? (
        <NewPlan
          key={`new-${reload}`}
          taken={plans?.map((p) => p.name) ?? []}
          quotaGroups={quotaGroups}
          made={(p) => saved(reached(p))}
        />
      ) : null}
    </section>
  );
}

function NewPlan(props: {
  taken: string[];
  quotaGroups: readonly string[];
  made: (plan: Plan) => void;
}) {
  const [name, setName] = useState('');
  const [nameError, setNameError] = useState('');
  return (
    <section class="new-plan" aria-labelledby="new-plan-title">
      <h2 id="new-plan-title">New plan</h2>
      <Field
        id="new-plan-name"
        name="plan-name"
        label="Plan name"
        value={name}
        onValue={setName}
        error={nameError}
        hint="Lower-case letters, digits, _ or -, from a letter (e.g. partner-gold)"
        required
      />
      <LimitsEditor
        id="new-plan"
        title="Its limits"
        limits={STARTER}
        quotaGroups={props.quotaGroups}
        saveLabel="Create plan"
        save={async (limits) => {
          const problem = !PLAN_NAME.test(name)
            ? 'Lower-case letters, digits, _ or -, from a letter, at most 32'
            : props.taken.includes(name)
              ? `There is a plan named ${name} already: edit it instead`
              : '';
          setNameError(problem);
          if (problem) {
            document.getElementById('new-plan-name')?.focus();
            throw new Error(problem);
          }
          props.made(await api.setPlan(name, limits));
          // The page says so; this form starts afresh.
          return '';
        }}
      />
    </section>
  );
}
