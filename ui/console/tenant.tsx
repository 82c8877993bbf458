/** One tenant: its status and the sections about it (tokens, limits, usage, alerts, cache). */
import { useEffect, useState } from 'hono/jsx/dom';
import type { KeyCheck, PublicTenant, RecentAlert, Whoami } from '../../src/types/wire';
import { AlertsSection, alertText } from './alerts';
import { api } from './api';
import { EditTenant } from './edit-tenant';
import { ExportSection } from './export';
import { ConfirmButton, fmtTime, Notice, refusal } from './form';
import { LimitsSection } from './limits';
import { PartnerAccessSection } from './partner-access';
import { RequestsSection } from './requests';
import { TokensSection } from './tokens';
import { UsageSection } from './usage';

const SECTIONS = ['Tokens', 'Limits', 'Usage', 'Requests', 'Alerts and cache', 'Settings'] as const;
type Section = (typeof SECTIONS)[number];

export function TenantPage(props: {
  id: string;
  canChange: boolean;
  settings: Whoami['settings'];
  back: () => void;
  audit: () => void;
}) {
  const [tenant, setTenant] = useState<PublicTenant | null>(null);
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const [section, setSection] = useState<Section>('Tokens');
  // The platform refused the tenant's key lately (its guard's alert log): said at the top.
  const [keyAlert, setKeyAlert] = useState<RecentAlert | null>(null);

  useEffect(() => {
    Promise.all([api.tenant(props.id), api.recentAlerts(props.id).catch(() => ({ alerts: [] }))])
      .then(([t, { alerts }]) => {
        setTenant(t);
        // A refusal of the last 24 h, unless the tenant was changed since (a new key, most
        // likely): a key that still fails raises its alert again within the hour.
        const since = Math.max(Date.now() - 86_400_000, Date.parse(t.updated_at));
        setKeyAlert(
          alerts.find(
            (a) => a.alert.kind === 'platform_key_rejected' && Date.parse(a.at) > since,
          ) ?? null,
        );
      })
      .catch((err: unknown) => setError(refusal(err, [])._form ?? 'Failed'));
  }, [props.id]);
  // A key the platform accepted (saved and checked, or checked as it is) ends the warning.
  const keyWorks = (check: KeyCheck | null) => {
    if (check?.result === 'valid') setKeyAlert(null);
  };

  if (error) {
    return (
      <section>
        <button type="button" class="link" onClick={props.back}>
          ← All tenants
        </button>
        <p class="form-error" role="alert">
          {error}
        </p>
      </section>
    );
  }
  if (!tenant) return <p class="loading">Loading…</p>;
  const active = tenant.status === 'active';
  return (
    <section aria-labelledby="tenant-title">
      <button type="button" class="link" onClick={props.back}>
        ← All tenants
      </button>
      <h1 id="tenant-title">{tenant.name}</h1>
      {keyAlert ? (
        <p class="warning" role="alert" data-testid="key-alert">
          {alertText(keyAlert.alert)} at {fmtTime(keyAlert.at)}: its requests fail with 502 (50205)
          until the key works. Check it on the Settings tab.
        </p>
      ) : null}
      <dl class="facts">
        <dt>Id</dt>
        <dd>
          <code class="id">{tenant.id}</code>
        </dd>
        <dt>Status</dt>
        <dd>
          <span class={`status status-${tenant.status}`}>{tenant.status}</span>
        </dd>
        <dt>Platform key fingerprint</dt>
        <dd>
          <code class="id">{tenant.key_fingerprint ?? '—'}</code>
        </dd>
        <dt>Plan</dt>
        <dd data-testid="tenant-plan">{tenant.plan ?? 'none'}</dd>
        <dt>Browser origins</dt>
        <dd>{tenant.cors_origins.length ? tenant.cors_origins.join(', ') : 'none'}</dd>
        <dt>Created</dt>
        <dd>{fmtTime(tenant.created_at)}</dd>
      </dl>
      <p>
        <button type="button" class="link" onClick={props.audit}>
          Audit log of this tenant
        </button>
      </p>
      {props.canChange ? (
        <div class="actions">
          <ConfirmButton
            label={active ? 'Disable tenant' : 'Enable tenant'}
            title={active ? `Disable ${tenant.name}?` : `Enable ${tenant.name}?`}
            message={
              active
                ? 'Every token of this tenant is refused (403 40302) from the next request on, until you enable it again.'
                : 'Its tokens work again from the next request on.'
            }
            confirmLabel={active ? 'Disable' : 'Enable'}
            danger={active}
            onConfirm={async () => {
              setTenant(await api.setStatus(tenant.id, active ? 'disable' : 'enable'));
              setNotice(active ? 'Tenant disabled.' : 'Tenant enabled.');
            }}
          />
          <ConfirmButton
            label="Delete tenant"
            title={`Delete ${tenant.name}?`}
            message="The tenant and all its tokens are removed for good. Its usage history and audit entries stay."
            confirmLabel="Delete for good"
            danger
            typeToConfirm={tenant.name}
            onConfirm={async () => {
              await api.deleteTenant(tenant.id);
              props.back();
            }}
          />
        </div>
      ) : null}
      {notice ? <Notice text={notice} /> : null}
      <nav class="tabs" aria-label="Tenant sections">
        {SECTIONS.map((s) => (
          <button
            type="button"
            class="tab"
            aria-current={s === section ? 'true' : undefined}
            onClick={() => setSection(s)}
          >
            {s}
          </button>
        ))}
      </nav>
      {section === 'Tokens' ? (
        <TokensSection tenantId={tenant.id} canChange={props.canChange} />
      ) : null}
      {section === 'Limits' ? (
        <LimitsSection tenantId={tenant.id} canChange={props.canChange} updated={setTenant} />
      ) : null}
      {section === 'Usage' ? (
        <>
          <UsageSection tenantId={tenant.id} />
          <ExportSection tenantId={tenant.id} />
        </>
      ) : null}
      {section === 'Requests' ? <RequestsSection tenantId={tenant.id} /> : null}
      {section === 'Alerts and cache' ? (
        <AlertsSection
          tenantId={tenant.id}
          canChange={props.canChange}
          localTargets={props.settings.webhook_local_targets}
        />
      ) : null}
      {section === 'Settings' ? (
        <>
          <EditTenant
            tenant={tenant}
            canChange={props.canChange}
            saved={(t, check) => {
              setTenant(t);
              keyWorks(check);
            }}
            checkedCurrent={keyWorks}
          />
          <PartnerAccessSection tenantId={tenant.id} canChange={props.canChange} />
        </>
      ) : null}
    </section>
  );
}
