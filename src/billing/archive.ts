/**
 * The usage archive (docs/BILLING.md, "Replay"): each batch the consumer delivered, and
 * each batch dead-lettered, kept in R2 by tenant and UTC day of its events, so a range
 * can be re-sent with the same ids and a day reconciled to the event. A batch's key is
 * made from its events' ids, so a batch archived again (a retry) overwrites itself.
 * Kept for USAGE_ARCHIVE_DAYS by the bucket's lifecycle rule (`npm run deploy` sets it).
 */
import { sha256Hex } from '../hash';
import type { UsageCloudEvent } from '../types/billing';
import { requestsOf } from './events';

export type ArchiveState = 'delivered' | 'dead';

/** `YYYY-MM-DD` of a time, ms. */
export const dayName = (t: number) => new Date(t).toISOString().slice(0, 10);

export const dayPrefix = (state: ArchiveState, tenant: string, day: string) =>
  `${state}/${tenant}/${day}/`;

/** Keeps one tenant's events of one day, as a batch of its own. */
export async function archiveBatch(
  bucket: R2Bucket,
  state: ArchiveState,
  tenant: string,
  day: string,
  events: UsageCloudEvent[],
): Promise<void> {
  const name = (await sha256Hex(events.map((e) => e.id).join('\n'))).slice(0, 32);
  await bucket.put(`${dayPrefix(state, tenant, day)}${name}.json`, JSON.stringify(events), {
    httpMetadata: { contentType: 'application/json' },
    customMetadata: { count: String(events.reduce((n, e) => n + requestsOf(e), 0)) },
  });
}

/** Most archived batches one count lists (10 list calls of 1,000). */
const MAX_COUNTED = 10_000;

/** Requests whose events the archive holds for a tenant's day, by state (the batches' metadata). */
export async function archivedCount(
  bucket: R2Bucket,
  state: ArchiveState,
  tenant: string,
  day: string,
): Promise<number> {
  let events = 0;
  let listed = 0;
  let cursor: string | undefined;
  do {
    const page = await bucket.list({
      prefix: dayPrefix(state, tenant, day),
      include: ['customMetadata'],
      ...(cursor ? { cursor } : {}),
    });
    for (const o of page.objects) events += Number(o.customMetadata?.count ?? 0);
    listed += page.objects.length;
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor && listed < MAX_COUNTED);
  return events;
}
