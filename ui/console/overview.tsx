/**
 * The console's first page: the last 24 hours across tenants (GET /admin/overview,
 * from the fleet boards the TenantGuards report to, at most a minute behind): the
 * fleet's series over 24 h or 7 d (fleet-charts.tsx), the tenants whose platform key
 * the platform refuses, then the top tenants by requests, by limiter refusals and by 5xx.
 */
import { useEffect, useState } from 'hono/jsx/dom';
import type { FleetTenant, Overview } from '../../src/types/wire';
import { count, fmtTime } from '../lib/format';
import { ColumnHeads } from '../lib/table';
import { api } from './api';
import { FleetCharts } from './fleet-charts';
import { PageError, refusal } from './form';

const share = (part: number, whole: number) =>
  whole > 0 ? `${((100 * part) / whole).toFixed(part * 1000 < whole ? 2 : 1)} %` : '—';

/** A row's heading cell: the tenant's name, a link to its page. */
function TenantHead(props: { t: FleetTenant; open: (id: string) => void }) {
  return (
    <th scope="row">
      <button type="button" class="link" onClick={() => props.open(props.t.tenant_id)}>
        {props.t.name ?? `${props.t.tenant_id} (deleted)`}
      </button>
    </th>
  );
}

/** The three top lists, in the order the page shows them. */
const TOP_LISTS = [
  {
    id: 'top-requests',
    title: 'Most requests',
    rows: 'top_requests',
    figure: 'requests',
    empty: 'No requests in these hours.',
  },
  {
    id: 'top-refused',
    title: 'Most refused (rate limits and quotas)',
    rows: 'top_refused',
    figure: 'refused',
    empty: 'No request was refused by a limit.',
  },
  {
    id: 'top-errors',
    title: 'Most 5xx',
    rows: 'top_errors',
    figure: 'errors_5xx',
    empty: 'No 5xx answers.',
  },
] as const;

/** One top list: the tenants, the figure it is sorted by first. */
function TopTable(props: {
  id: string;
  title: string;
  rows: FleetTenant[];
  figure: 'requests' | 'refused' | 'errors_5xx';
  /** All tenants' requests: the busiest's share of them. */
  total: number;
  empty: string;
  open: (id: string) => void;
}) {
  const label = { requests: 'Requests', refused: 'Refused (429)', errors_5xx: '5xx' }[props.figure];
  return (
    <section class="top-list" aria-labelledby={`${props.id}-title`}>
      <h2 id={`${props.id}-title`}>{props.title}</h2>
      {props.rows.length === 0 ? (
        <p class="hint">{props.empty}</p>
      ) : (
        <table class="grid" data-testid={props.id}>
          <thead>
            <tr>
              <th scope="col">Tenant</th>
              <th scope="col">{label}</th>
              <th scope="col">
                {props.figure === 'requests' ? 'Share of all requests' : 'Share of its requests'}
              </th>
            </tr>
          </thead>
          <tbody>
            {props.rows.map((t) => (
              <tr key={t.tenant_id}>
                <TenantHead t={t} open={props.open} />
                <td>{count(t[props.figure])}</td>
                <td>
                  {props.figure === 'requests'
                    ? share(t.requests, props.total)
                    : share(t[props.figure], t.requests)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

export function OverviewPage(props: { open: (id: string) => void }) {
  const [data, setData] = useState<Overview | null>(null);
  const [error, setError] = useState('');
  const [reload, setReload] = useState(0);
  // How long the page took, from asking to drawn (docs/CONSOLE.md, "Measured").
  const [took, setTook] = useState<number | null>(null);

  useEffect(() => {
    let live = true;
    const started = performance.now();
    setError('');
    api
      .overview()
      .then((o) => {
        if (!live) return;
        setData(o);
        requestAnimationFrame(() => setTook(performance.now() - started));
      })
      .catch((err: unknown) => live && setError(refusal(err, [])._form ?? 'Failed'));
    return () => {
      live = false;
    };
  }, [reload]);

  return (
    <section aria-labelledby="overview-title" data-drawn-ms={took ?? undefined}>
      <h1 id="overview-title">Overview</h1>
      <PageError error={error} />
      {data === null ? (
        <p class="loading">Loading…</p>
      ) : (
        <>
          <p data-testid="overview-totals">
            The last {data.hours} h (since {fmtTime(data.since)}): {count(data.tenants)}{' '}
            {data.tenants === 1 ? 'tenant' : 'tenants'} with traffic, {count(data.totals.requests)}{' '}
            data requests (and {count(data.totals.self_service)} self-service ones, never billed:
            the portal's, a token's own view and rotation, MCP discovery),{' '}
            {count(data.totals.refused)} refused, {count(data.totals.errors_5xx)} answered 5xx, of
            which {count(data.totals.key_rejected)} because the platform refused a tenant's key.{' '}
            <button type="button" class="link" onClick={() => setReload(reload + 1)}>
              Refresh
            </button>
          </p>
          <p class="hint">
            From the fleet boards each tenant's guard reports to once a minute, so the last minute
            may be missing. Asked in {data.ms} ms
            {took === null ? '' : `, shown in ${took.toFixed(0)} ms`}.
          </p>
          <section aria-labelledby="keys-title">
            <h2 id="keys-title">Platform keys refused by the platform</h2>
            {data.key_rejected.length === 0 ? (
              <p class="hint" data-testid="no-key-failures">
                None: the platform accepted every tenant's key.
              </p>
            ) : (
              <table class="grid" data-testid="key-failures">
                <caption class="warning">
                  These tenants' requests fail (502 50205) until their platform key is fixed: check
                  it on the tenant's Settings tab.
                </caption>
                <ColumnHeads
                  names={['Tenant', 'Refusals', "Platform's answer", 'Last, in the hour of']}
                />
                <tbody>
                  {data.key_rejected.map((t) => (
                    <tr key={t.tenant_id}>
                      <TenantHead t={t} open={props.open} />
                      <td>{count(t.key_rejected)}</td>
                      <td>HTTP {t.key_status ?? '?'}</td>
                      <td>{fmtTime(t.key_at)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </section>
          <FleetCharts open={props.open} />
          <div class="tops">
            {TOP_LISTS.map((list) => (
              <TopTable
                key={list.id}
                id={list.id}
                title={list.title}
                rows={data[list.rows]}
                figure={list.figure}
                total={data.totals.requests}
                empty={list.empty}
                open={props.open}
              />
            ))}
          </div>
        </>
      )}
    </section>
  );
}
