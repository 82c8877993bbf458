/**
 * An isolate's usage events on their way to the queue (docs/BILLING.md, "Delivery"): they
 * go together, one `sendBatch` of at most MAX_EVENTS, or what BATCH_WAIT_MS gathered,
 * not one `send` each. A send is a subrequest, and per request it was most of what the
 * export cost the Worker (BENCHMARKS.md, "Usage export").
 *
 * The batch's first request keeps the isolate alive until the batch goes (its waitUntil
 * holds the timer); the request that fills it sends it at once. Each sends from its own
 * request context, so no request waits on a promise another one settles. An isolate that
 * dies before then loses its unsent batch, as the usage history's buffer does.
 */
import { log } from '../log';
import { count } from '../stats';
import type { UsageRecord } from '../types/billing';

/** Queues takes at most 100 messages a batch (256 KB: a record is well under 1 KB). */
export const MAX_EVENTS = 100;
/** How long a batch's first event waits for company: far inside waitUntil's 30 s. */
export const BATCH_WAIT_MS = 1_000;
/** A refused batch is tried once more after this long. */
const RETRY_AFTER_MS = 1_000;

type WaitUntil = (promise: Promise<unknown>) => void;

export class UsageEventBatch {
  private records: UsageRecord[] = [];

  add(queue: Queue<UsageRecord>, record: UsageRecord, waitUntil: WaitUntil): void {
    this.records.push(record);
    if (this.records.length >= MAX_EVENTS) {
      waitUntil(this.sendWaiting(queue));
    } else if (this.records.length === 1) {
      const batch = this.records;
      // Sends this batch unless the request that filled it already did.
      const due = new Promise((resolve) => setTimeout(resolve, BATCH_WAIT_MS)).then(() =>
        this.records === batch ? this.sendWaiting(queue) : undefined,
      );
      waitUntil(due);
    }
  }

  private async sendWaiting(queue: Queue<UsageRecord>): Promise<void> {
    const records = this.records;
    this.records = [];
    const messages = records.map((body) => ({ body, contentType: 'json' as const }));
    try {
      await queue.sendBatch(messages).catch(async () => {
        await new Promise((resolve) => setTimeout(resolve, RETRY_AFTER_MS));
        await queue.sendBatch(messages);
      });
    } catch (err) {
      // Logged and counted; each shows as backlog in its tenant's export status.
      count('usage_events_lost', records.length);
      log.error('usage.events_not_sent', {
        events: records.length,
        request_ids: records.slice(0, 5).map((r) => r.rid),
        error: err instanceof Error ? err.message.slice(0, 200) : 'unknown',
      });
    }
  }
}

/** This isolate's batch. */
export const usageEventBatch = new UsageEventBatch();
