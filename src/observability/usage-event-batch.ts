/**
 * An isolate's usage events on their way to the queue (docs/BILLING.md, "Delivery, retries and dead letters"): they
 * go together, as one message (a pack) of at most MAX_EVENTS, or what BATCH_WAIT_MS
 * gathered, not one message each. A message costs a subrequest here, and the queue and
 * its consumer work per message: per request, that was most of what the export cost the
 * Worker (BENCHMARKS.md, "Usage export"), and Queues bills by the message.
 *
 * The batch's first request keeps the isolate alive until the batch goes (its waitUntil
 * holds the timer); the request that fills it sends it at once. Each sends from its own
 * request context, so no request waits on a promise another one settles. An isolate that
 * dies before then loses its unsent batch, as the usage history's buffer does.
 */
import { log } from '../log';
import { count } from '../stats';
import type { UsageMessage, UsageRecord } from '../types/billing';

/** Events in one pack: the consumer's sink batches are 100 too. */
export const MAX_EVENTS = 100;
/**
 * A pack's JSON at most this many characters: under Queues' 128 KB a message even if
 * each took 3 bytes (a record is about 300).
 */
const MAX_PACK_CHARS = 40_000;
/** How long a batch's first event waits for company: far inside waitUntil's 30 s. */
export const BATCH_WAIT_MS = 1_000;
/** A refused pack is tried once more after this long. */
const RETRY_AFTER_MS = 1_000;

type WaitUntil = (promise: Promise<unknown>) => void;

export class UsageEventBatch {
  private records: UsageRecord[] = [];
  private chars = 0;

  add(queue: Queue<UsageMessage>, record: UsageRecord, waitUntil: WaitUntil): void {
    const chars = JSON.stringify(record).length + 1;
    if (this.chars + chars > MAX_PACK_CHARS) waitUntil(this.sendWaiting(queue));
    this.records.push(record);
    this.chars += chars;
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

  private async sendWaiting(queue: Queue<UsageMessage>): Promise<void> {
    const records = this.records;
    this.records = [];
    this.chars = 0;
    if (records.length === 0) return;
    const pack: UsageMessage = { kind: 'pack', records };
    const send = () => queue.send(pack, { contentType: 'json' });
    try {
      await send().catch(async () => {
        await new Promise((resolve) => setTimeout(resolve, RETRY_AFTER_MS));
        await send();
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
