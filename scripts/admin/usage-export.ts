/**
 * `usage export` and `usage replay` (docs/BILLING.md): a tenant's usage export by day,
 * reconciled against its history, and a replay of a range, step after step.
 */
import type { ExportStatus, ReplayStep } from '../../src/types/wire';
import { segments } from '../../ui/lib/admin-client';
import type { Client } from './client';

export async function exportStatus(
  api: Client,
  tenantId: string,
  q: { from?: string; to?: string; archive?: boolean },
): Promise<{ data: ExportStatus; say: string }> {
  const query = {
    ...(q.from ? { from: q.from } : {}),
    ...(q.to ? { to: q.to } : {}),
    ...(q.archive ? { archive: 'true' as const } : {}),
  };
  const data = await api.data(
    api.admin.tenants[':id'].usage.export.$get({ param: segments({ id: tenantId }), query }),
  );
  const head = `export ${data.mode}${data.sink ? '' : ' (no sink: nothing is exported)'}`;
  const rows = data.days.map((d) => {
    const archived = d.archived ? `  archived ${d.archived.delivered}/${d.archived.dead}` : '';
    const lag = d.lag_ms === null ? '-' : `${(d.lag_ms / 1000).toFixed(1)} s`;
    return (
      `${d.day}  billable ${String(d.billable).padStart(7)}  delivered ${String(d.delivered).padStart(7)}` +
      `  dead ${String(d.dead).padStart(5)}  backlog ${String(d.backlog).padStart(6)}  lag ${lag}${archived}`
    );
  });
  return { data, say: [head, ...rows].join('\n') || head };
}

/** Runs a replay's steps until the range is done; each step says what it sent. */
export async function replay(
  api: Client,
  tenantId: string,
  range: { from: string; to: string },
  progress: (line: string) => void,
): Promise<{ data: ReplayStep[]; say: string }> {
  const steps: ReplayStep[] = [];
  let cursor: string | undefined;
  do {
    const step = await api.data(
      api.admin.tenants[':id'].usage.replay.$post({
        param: segments({ id: tenantId }),
        json: { ...range, ...(cursor ? { cursor } : {}) },
      }),
    );
    steps.push(step);
    progress(`sent ${step.sent} events from ${step.batches} archived batches`);
    cursor = step.cursor ?? undefined;
  } while (cursor);
  const sent = steps.reduce((n, s) => n + s.sent, 0);
  const recovered = steps.reduce((n, s) => n + s.recovered, 0);
  return {
    data: steps,
    say: `Replayed ${sent} events (${recovered} of them dead letters, now delivered) in ${steps.length} steps.`,
  };
}
