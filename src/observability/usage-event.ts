/**
 * The usage export's producer (docs/BILLING.md): a billable request becomes one record,
 * made from what the request log gathered, and goes to the USAGE_EVENTS queue off the
 * request path (waitUntil), packed with the isolate's other records of the moment into
 * one message (usage-event-batch.ts); the queue's consumer (src/billing/) makes each a
 * CloudEvent and delivers it. A record holds ids and figures only: the token's id, never
 * the token, no key, no query.
 */
import type { Context } from 'hono';
import { count } from '../stats';
import type { UsageMessage, UsageRecord, Via } from '../types/billing';
import type { Bindings, HonoEnv } from '../types/context';
import type { Settings } from '../types/settings';
import { usageEventBatch } from './usage-event-batch';
import { callerChoseId } from './via';

/**
 * How billable requests are exported: `events` (one record each, here), `aggregate`
 * (summed by minute in the usage batch; the TenantGuard produces one per minute), or
 * null: the export is off, or lacks its sink or its queue.
 */
export function exportMode(env: Bindings, settings: Settings): 'events' | 'aggregate' | null {
  if (settings.USAGE_EXPORT === 'off' || !settings.USAGE_SINK_URL || !env.USAGE_EVENTS) {
    return null;
  }
  return settings.USAGE_EXPORT;
}

/**
 * The event's id: the request id, unique since the gateway made it; a caller that chose
 * its own X-Request-ID could send one twice, and a sink drops repeated ids, so its
 * events get the request id with a suffix of the gateway's (`data.request_id` keeps it).
 */
function eventIdOf(c: Context<HonoEnv>, requestId: string): string {
  return callerChoseId(c) ? `${requestId}.${crypto.randomUUID().slice(0, 8)}` : requestId;
}

export function produceUsageEvent(
  c: Context<HonoEnv>,
  queue: Queue<UsageMessage>,
  fields: Omit<UsageRecord, 'id' | 'rid' | 'via'> & { mcp: boolean },
): void {
  const rid = c.get('requestId');
  const { mcp, ...rest } = fields;
  const via: Via = mcp ? 'mcp' : c.req.header('upgrade') === 'websocket' ? 'ws' : 'http';
  const record: UsageRecord = { id: eventIdOf(c, rid), rid, ...rest, via };
  count('usage_events');
  // With the isolate's other records: one message, not one each (usage-event-batch.ts).
  usageEventBatch.add(queue, record, (p) => c.executionCtx.waitUntil(p));
}
