/**
 * Operator API: a tenant's usage export by day, reconciled against its usage history,
 * and its replay (definitions: usage-export.contract.ts; docs/BILLING.md).
 */
import { archivedCount } from '../billing/archive';
import { replayStep } from '../billing/replay';
import { GatewayError, invalidField } from '../errors';
import type { ExportStatus } from '../types/wire';
import { adminStores, audit, existingTenant, guardFor } from './common';
import { type AdminApp, handle } from './handle';
import * as contract from './usage-export.contract';

const DAY_MS = 86_400_000;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** A range's end: a date means its last millisecond. */
const endOf = (text: string) => Date.parse(text) + (DATE_ONLY.test(text) ? DAY_MS - 1 : 0);

function checkRange(where: 'query' | 'body', from: number, to: number): void {
  if (from > to) throw invalidField(where, 'from', 'from must not be after to');
  if (to - from >= contract.EXPORT_MAX_DAYS * DAY_MS) {
    throw invalidField(where, 'to', `a range spans at most ${contract.EXPORT_MAX_DAYS} days`);
  }
}

export function usageExportRoutes(app: AdminApp): void {
  handle(app, contract.getExport, async (c) => {
    const { id } = c.req.valid('param');
    const q = c.req.valid('query');
    await existingTenant(await adminStores(c), id);
    const to = q.to ? endOf(q.to) : Date.now();
    const from = q.from ? Date.parse(q.from) : to - 6 * DAY_MS;
    checkRange('query', from, to);
    const settings = c.get('settings');
    const days = await guardFor(c.env, id).export().status(from, to);
    const bucket = c.env.USAGE_ARCHIVE;
    if (q.archive === 'true' && bucket) {
      await Promise.all(
        days.map(async (d) => {
          const [delivered, dead] = await Promise.all([
            archivedCount(bucket, 'delivered', id, d.day),
            archivedCount(bucket, 'dead', id, d.day),
          ]);
          d.archived = { delivered, dead };
        }),
      );
    }
    const answer: ExportStatus = {
      tenant_id: id,
      mode: settings.USAGE_EXPORT,
      sink: Boolean(settings.USAGE_SINK_URL && c.env.USAGE_EVENTS),
      days,
    };
    return answer;
  });

  handle(app, contract.replayUsage, async (c, op) => {
    const { id } = c.req.valid('param');
    const body = c.req.valid('json');
    await existingTenant(await adminStores(c), id);
    const range = { from: Date.parse(body.from), to: endOf(body.to) };
    checkRange('body', range.from, range.to);
    const settings = c.get('settings');
    const bucket = c.env.USAGE_ARCHIVE;
    if (!bucket || !settings.USAGE_SINK_URL || !c.env.USAGE_EVENTS) {
      throw new GatewayError('USAGE_EXPORT_OFF');
    }
    const step = await replayStep(c.env, settings, bucket, id, range, body.cursor);
    await audit(c, op.audit, {
      tenant_id: id,
      detail: { from: body.from, to: body.to, sent: step.sent, recovered: step.recovered },
    });
    return step;
  });
}
