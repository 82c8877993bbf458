/**
 * The usage export's consumer (docs/BILLING.md): the Worker's `queue` handler. A batch of
 * `usage-events` (at most 100 messages, or what 10 s gathered; a message is an isolate's
 * pack of events, one event, or a minute's aggregate) goes to the sink as CloudEvents
 * batches of at most 100 events; once the sink took them all, each tenant's events of each
 * day are archived (R2) and counted in the tenant's export status, and the batch is
 * acknowledged. A sink that fails gets the whole batch again after a backoff
 * (USAGE_RETRY_BASE_S, doubling, at most 300 s); after the queue's max_retries the
 * messages go to the dead-letter queue, whose batches are archived as dead letters, for
 * `usage replay`. At least once, with stable ids: a repeat at the sink is a repeated id.
 */
import { log } from '../log';
import { guardFor } from '../objects/tenant/tenant-guard';
import { loadSettings } from '../settings';
import type { UsageCloudEvent, UsageMessage } from '../types/billing';
import type { Bindings } from '../types/context';
import { type ArchiveState, archiveBatch, dayName } from './archive';
import { cloudEventsOf, requestsOf } from './events';
import { type Delivery, deliver, retryDelay } from './sink';

/** A queue whose name ends so is the dead-letter queue (wrangler.toml: usage-events-dlq). */
const DEAD_LETTERS = '-dlq';

export async function consumeUsage(batch: MessageBatch<UsageMessage>, env: Bindings) {
  const settings = loadSettings(env);
  const dead = batch.queue.endsWith(DEAD_LETTERS);
  const events = batch.messages.flatMap((m) => cloudEventsOf(m.body, settings.USAGE_EVENT_SOURCE));
  if (!dead) {
    const outcome = await deliverInBatches(events, settings);
    if (!outcome.ok) {
      const attempts = Math.min(...batch.messages.map((m) => m.attempts));
      const delaySeconds = retryDelay(attempts, settings.USAGE_RETRY_BASE_S);
      log.warn('usage.sink_failed', {
        events: events.length,
        why: outcome.why,
        attempts,
        retry_in_s: delaySeconds,
      });
      batch.retryAll({ delaySeconds });
      return;
    }
  } else {
    log.error('usage.dead_letters', { events: events.length });
  }
  // A failure here throws: the runtime tries the batch again (repeated ids at the sink).
  await keep(env, dead ? 'dead' : 'delivered', events, Date.now());
  batch.ackAll();
}

/**
 * A sink gets at most this many events a request: a queue batch of packs holds up to
 * 100 × 100 (docs/BILLING.md, "Delivery, retries and dead letters").
 */
export const SINK_BATCH = 100;

/** The events in sink batches of at most SINK_BATCH, one after the other; the first failure stops. */
async function deliverInBatches(
  events: UsageCloudEvent[],
  settings: Parameters<typeof deliver>[1],
): Promise<Delivery> {
  for (let i = 0; i < events.length; i += SINK_BATCH) {
    const outcome = await deliver(events.slice(i, i + SINK_BATCH), settings);
    if (!outcome.ok) return outcome;
  }
  return { ok: true };
}

/** Archives each tenant's events of each day, and tells its TenantGuard. */
export async function keep(
  env: Bindings,
  state: ArchiveState,
  events: UsageCloudEvent[],
  at: number,
): Promise<void> {
  const groups = new Map<string, UsageCloudEvent[]>();
  for (const e of events) {
    const key = `${e.subject} ${e.time.slice(0, 10)}`;
    const group = groups.get(key);
    if (group) group.push(e);
    else groups.set(key, [e]);
  }
  await Promise.all(
    [...groups.values()].map(async (group) => {
      const first = group[0] as UsageCloudEvent;
      const tenant = first.subject;
      const oldest = Math.min(...group.map((e) => Date.parse(e.time)));
      if (env.USAGE_ARCHIVE) {
        await archiveBatch(env.USAGE_ARCHIVE, state, tenant, dayName(oldest), group);
      }
      const part = guardFor(env, tenant).export();
      const requests = group.reduce((n, e) => n + requestsOf(e), 0);
      if (state === 'dead') await part.deadLettered(oldest, requests);
      else await part.delivered(oldest, requests, oldest, at);
    }),
  );
}
