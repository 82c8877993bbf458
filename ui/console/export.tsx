/**
 * A tenant's usage export, by day (docs/BILLING.md, "Reconciliation"): billable requests
 * as the usage history counts them, what the sink took, dead letters, the backlog still
 * queued or retrying, and how long the last batch waited.
 */
import { useEffect, useState } from 'hono/jsx/dom';
import type { ExportStatus } from '../../src/types/wire';
import { api } from './api';
import { fmtTime, PageError, refusal } from './form';

export function ExportSection(props: { tenantId: string }) {
  const [status, setStatus] = useState<ExportStatus | null>(null);
  const [error, setError] = useState('');
  const [reload, setReload] = useState(0);

  useEffect(() => {
    let live = true;
    api.usageExport(props.tenantId).then(
      (s) => live && setStatus(s),
      (err: unknown) => live && setError(refusal(err, [])._form ?? 'Failed'),
    );
    return () => {
      live = false;
    };
  }, [props.tenantId, reload]);

  if (error) return <PageError error={error} />;
  if (!status) return <p class="loading">Loading…</p>;
  return (
    <section aria-labelledby="export-title" data-testid="usage-export">
      <h2 id="export-title">Usage export</h2>
      <p class="hint">
        {status.sink
          ? `Each billable request is one event at the sink (${status.mode}); self-service requests are never billed.`
          : 'No sink is set (USAGE_SINK_URL): nothing is exported.'}{' '}
        <button type="button" class="link" onClick={() => setReload(reload + 1)}>
          Reload figures
        </button>
      </p>
      <table class="grid">
        <caption>The last 7 days (UTC)</caption>
        <thead>
          <tr>
            <th scope="col">Day</th>
            <th scope="col">Billable</th>
            <th scope="col">Delivered</th>
            <th scope="col">Dead letters</th>
            <th scope="col" title="Billable requests not yet delivered: queued or retrying">
              Backlog
            </th>
            <th scope="col" title="How long the last delivered batch's oldest event waited">
              Export lag
            </th>
            <th scope="col">Last delivered</th>
          </tr>
        </thead>
        <tbody>
          {status.days.length === 0 ? (
            <tr>
              <td colSpan={7}>No billable requests in these days.</td>
            </tr>
          ) : (
            status.days.map((d) => (
              <tr key={d.day}>
                <th scope="row">{d.day}</th>
                <td>{d.billable}</td>
                <td>{d.delivered}</td>
                <td class={d.dead > 0 ? 'warning' : ''}>{d.dead}</td>
                <td>{d.backlog}</td>
                <td>{d.lag_ms === null ? '–' : `${(d.lag_ms / 1000).toFixed(1)} s`}</td>
                <td>{d.last_delivered_at ? fmtTime(d.last_delivered_at) : '–'}</td>
              </tr>
            ))
          )}
        </tbody>
      </table>
      {status.days.some((d) => d.dead > 0) ? (
        <p class="hint">
          Dead letters are kept in the archive:{' '}
          <code>npm run admin -- usage replay --tenant {props.tenantId} --from DAY --to DAY</code>{' '}
          delivers them.
        </p>
      ) : null}
    </section>
  );
}
