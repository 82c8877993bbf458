/**
 * A tenant's usage history as the operator API reads it (GET .../analytics): the query
 * (analytics.contract.ts) made a range of at most the retention, hour or day buckets
 * and groups; and the series as CSV.
 */
import type * as z from 'zod';
import { invalidField } from '../errors';
import type { History, HistoryGroup, HistoryQuery } from '../objects/tenant/history/rollups';
import type { historyQuerySchema } from './analytics.contract';

const GROUPS: readonly HistoryGroup[] = ['route', 'status', 'token'];

/** The validated query, with defaults: the last 7 days up to now. */
export function historyQuery(
  q: z.output<typeof historyQuerySchema>,
  retentionDays: number,
  now = Date.now(),
): HistoryQuery {
  const to = q.to ? Date.parse(q.to) : now;
  const from = q.from ? Date.parse(q.from) : to - 7 * 86_400_000;
  if (from > to) throw invalidField('query', 'from', 'from must not be after to');
  if (to - from > retentionDays * 86_400_000) {
    throw invalidField('query', 'from', `the range must be at most ${retentionDays} days`);
  }
  const groupBy = (q.group_by ?? '')
    .split(',')
    .map((g) => g.trim())
    .filter(Boolean);
  const unknown = groupBy.filter((g) => !GROUPS.some((known) => known === g));
  if (unknown.length > 0) {
    throw invalidField('query', 'group_by', `group_by must be among ${GROUPS.join(', ')}`, [
      ...GROUPS,
    ]);
  }
  return {
    from: Math.floor(from / 3_600_000) * 3_600_000,
    to,
    granularity: q.granularity,
    groupBy: GROUPS.filter((g) => groupBy.includes(g)),
  };
}

/** The series as CSV (a billing export): one row per point, the groups asked for first. */
export function historyCsv(history: History, groupBy: HistoryGroup[]): string {
  const columns = [
    't',
    ...groupBy,
    'requests',
    'units',
    'p50_ms',
    'p95_ms',
    'cache_hits',
    'cache_lookups',
    'billable',
    'self_service',
  ] as const;
  const cell = (v: unknown) => {
    const text = v === null || v === undefined ? '' : String(v);
    return /[",\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  const lines = history.series.map((p) => columns.map((c) => cell(p[c])).join(','));
  return `${[columns.join(','), ...lines].join('\n')}\n`;
}
