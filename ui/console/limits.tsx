/**
 * A tenant's limits: the plan it is on (admin: another plan, or none), what remains
 * now of each policy and quota, and (admin) its own limits, which win over its
 * plan's until they are removed.
 */
import { useEffect, useState } from 'hono/jsx/dom';
import type { Limits, Plan, PublicTenant, TenantUsage, TokenListing } from '../../src/types/wire';
import { duration, meterWindow } from '../lib/format';
import { ColumnHeads } from '../lib/table';
import { api } from './api';
import { ConfirmButton, Notice, PageError, refusal } from './form';
import { LimitsEditor } from './limits-editor';

export function LimitsSection(props: {
  tenantId: string;
  canChange: boolean;
  /** The tenant as the operator API answered a change of its plan. */
  updated: (tenant: PublicTenant) => void;
}) {
  const [usage, setUsage] = useState<TenantUsage | null>(null);
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const [reload, setReload] = useState(0);
  // Tokens with limits of their own, whose meters can be shown beside the tenant's.
  const [metered, setMetered] = useState<TokenListing[]>([]);
  const [tokenId, setTokenId] = useState('');
  const [plans, setPlans] = useState<Plan[]>([]);
  const [quotaGroups, setQuotaGroups] = useState<readonly string[]>([]);

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
    api.operations().then(
      (o) => setQuotaGroups(o.quota_groups),
      () => setQuotaGroups([]),
    );
  }, [props.tenantId]);

  // The plans with their tenants as they are now: again after each change here.
  useEffect(() => {
    api.plans().then(
      (r) => setPlans(r.plans),
      () => setPlans([]),
    );
  }, [props.tenantId, reload]);

  if (error) return <PageError error={error} />;
  if (!usage) return <p class="loading">Loading…</p>;
  const saved = (text: string) => {
    setNotice(text);
    setReload(reload + 1);
  };
  const source = usage.custom
    ? `its own limits${usage.plan ? ` (they win over its plan, ${usage.plan})` : ''}`
    : usage.plan
      ? `the limits of its plan, ${usage.plan}`
      : 'the gateway’s default limits';
  return (
    <section aria-labelledby="limits-title">
      <h2 id="limits-title">Limits</h2>
      <p data-testid="limits-source">
        This tenant has {source}. Mode: <strong>{usage.limits.limiter ?? 'leased'}</strong>.{' '}
        <button type="button" class="link" onClick={() => setReload(reload + 1)}>
          Refresh
        </button>
      </p>
      {notice ? <Notice text={notice} /> : null}
      {props.canChange ? (
        <PlanPicker
          tenantId={props.tenantId}
          plan={usage.plan}
          plans={plans}
          changed={(tenant) => {
            props.updated(tenant);
            saved(tenant.plan ? `Now on plan ${tenant.plan}.` : 'No longer on a plan.');
          }}
        />
      ) : null}
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
        <ColumnHeads
          names={[
            'Policy or quota',
            'Limit',
            'Window',
            'Used',
            {
              name: 'Reserved',
              title: 'Leased to isolates and regional brokers, not yet spent or given back',
            },
            'Remaining',
            'Resets in',
          ]}
        />
        <tbody data-testid="meters">
          {usage.meters.map((m) => (
            <tr key={m.name}>
              <th scope="row">
                {m.name} <span class="hint">({m.kind})</span>
              </th>
              <td>{m.limit}</td>
              <td>{meterWindow(m)}</td>
              <td>{m.used}</td>
              <td>{m.reserved ?? 0}</td>
              <td>
                <meter
                  min={0}
                  max={m.limit}
                  value={m.remaining}
                  aria-label={`${m.name} remaining`}
                />{' '}
                {m.remaining}
              </td>
              <td>{duration(m.reset_s)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {props.canChange ? (
        <LimitsEditor
          // Made again from each answer: it starts from the limits in force now (its plan's
          // once on a plan), never from what held before a change.
          key={JSON.stringify([usage.plan, usage.custom, usage.limits])}
          id="tenant-limits"
          title={usage.plan ? 'Own limits (win over the plan’s)' : 'Change the limits'}
          hint={
            usage.plan
              ? usage.custom
                ? `These are this tenant's own limits: they win over plan ${usage.plan}'s until removed.`
                : `These are plan ${usage.plan}'s limits. Saving makes them this tenant's own limits: they win over plan ${usage.plan}'s (and its later changes) until removed.`
              : undefined
          }
          limits={usage.limits}
          quotaGroups={quotaGroups}
          saveLabel="Save limits"
          save={async (limits: Limits) => {
            await api.setLimits(props.tenantId, limits);
            // Said above the form, which starts again from the limits now in force.
            saved('Limits saved: they hold from the next request.');
            return '';
          }}
        >
          {usage.custom ? (
            <ConfirmButton
              label={usage.plan ? 'Return to the plan’s limits' : 'Reset to defaults'}
              title={usage.plan ? `Return to plan ${usage.plan}?` : 'Reset to the default limits?'}
              message={
                usage.plan
                  ? `The tenant's own limits are removed; plan ${usage.plan}'s hold from the next request.`
                  : "The tenant's own limits are removed; the gateway's defaults hold from the next request."
              }
              confirmLabel={usage.plan ? 'Return to the plan' : 'Reset'}
              onConfirm={async () => {
                await api.resetLimits(props.tenantId);
                saved('The tenant’s own limits are removed.');
              }}
            />
          ) : null}
        </LimitsEditor>
      ) : null}
    </section>
  );
}

/** Which plan the tenant is on; another one, or none, from the next request on. */
function PlanPicker(props: {
  tenantId: string;
  plan: string | null;
  plans: Plan[];
  changed: (tenant: PublicTenant) => void;
}) {
  const [picked, setPicked] = useState(props.plan ?? '');
  const [error, setError] = useState('');
  if (props.plans.length === 0 && !props.plan) {
    return <p class="hint">No plans yet: make one on the Plans page to share limits.</p>;
  }
  return (
    <form
      class="toolbar"
      onSubmit={async (e: Event) => {
        e.preventDefault();
        setError('');
        try {
          props.changed(await api.updateTenant(props.tenantId, { plan: picked || null }));
        } catch (err) {
          setError(refusal(err, ['plan']).plan ?? refusal(err, [])._form ?? 'Failed');
        }
      }}
    >
      <label for="tenant-plan">Plan</label>
      <select
        id="tenant-plan"
        name="plan"
        aria-describedby={error ? 'tenant-plan-error' : undefined}
        onChange={(e: Event) => setPicked((e.target as HTMLSelectElement).value)}
      >
        <option value="" selected={picked === ''}>
          no plan
        </option>
        {props.plans.map((p) => (
          <option value={p.name} selected={picked === p.name}>
            {p.name} ({p.tenants} tenant{p.tenants === 1 ? '' : 's'})
          </option>
        ))}
      </select>
      <button type="submit" disabled={picked === (props.plan ?? '')}>
        Change plan
      </button>
      {error ? (
        <p class="error" id="tenant-plan-error" role="alert">
          {error}
        </p>
      ) : null}
    </form>
  );
}
