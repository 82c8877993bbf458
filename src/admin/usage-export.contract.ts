/** The operator API's view of a tenant's usage export, and its replay (docs/BILLING.md). */
import * as z from 'zod';
import type { ExportStatus, ReplayStep } from '../types/wire';
import { instant, int, tenantParams } from './fields';
import { adminOperation, answerOf } from './operation';

/** The most days one status or one replay spans. */
export const EXPORT_MAX_DAYS = 31;

const when = (name: string) =>
  z
    .string()
    .max(40)
    .refine((s) => !Number.isNaN(Date.parse(s)), `${name} must be an ISO 8601 date or date-time`);

export const exportQuery = z.strictObject({
  /** First day (a date or a time in it); default: 6 days before `to`. */
  from: when('from').optional(),
  /** Last day; default: today (UTC). */
  to: when('to').optional(),
  /** `true`: count the archive's events for each day too (R2 lists). */
  archive: z.enum(['true', 'false'], { error: 'archive must be true or false' }).optional(),
});

export const replayBody = z.strictObject({
  /** Start of the range: a date (its 00:00 UTC) or a time. */
  from: when('from'),
  /** End of the range, inclusive: a date (to its last millisecond) or a time. */
  to: when('to'),
  /** Where the previous step stopped (its `cursor`). */
  cursor: z.string().max(1200).optional(),
});

const day = () =>
  z.object({
    day: z.string(),
    billable: int(),
    delivered: int(),
    dead: int(),
    replayed: int(),
    backlog: int(),
    lag_ms: int().nullable(),
    last_delivered_at: instant().nullable(),
    archived: z.object({ delivered: int(), dead: int() }).optional(),
  });

export const getExport = adminOperation({
  method: 'get',
  path: '/admin/tenants/:id/usage/export',
  role: 'viewer',
  summary:
    "A tenant's usage export by day: billable requests, delivered, dead letters, backlog, lag",
  description:
    'Reconciliation: `billable` is what the usage history counted, `delivered` and `dead` what ' +
    'the consumer reported; `backlog` is the rest (queued or retrying). With `archive=true`, ' +
    'the events the archive holds for each day, counted from R2. At most 31 days.',
  params: tenantParams,
  query: exportQuery,
  answer: () =>
    answerOf<ExportStatus>()(
      z.object({
        tenant_id: z.string(),
        mode: z.enum(['events', 'aggregate', 'off']),
        sink: z.boolean(),
        days: z.array(day()),
      }),
    ),
});

export const replayUsage = adminOperation({
  method: 'post',
  path: '/admin/tenants/:id/usage/replay',
  role: 'admin',
  audit: 'usage.replayed',
  summary: "Re-send a range of a tenant's usage events from the archive, with their own ids",
  description:
    'One step: at most 20 archived batches (2,000 events), then `cursor` says where the next ' +
    'starts (null: done). Dead letters among them, once the sink takes them, count as ' +
    'delivered. The sink sees repeated ids for events it had. At most 31 days.',
  params: tenantParams,
  body: replayBody,
  answer: () =>
    answerOf<ReplayStep>()(
      z.object({
        tenant_id: z.string(),
        sent: int(),
        batches: int(),
        recovered: int(),
        cursor: z.string().nullable(),
      }),
    ),
});
