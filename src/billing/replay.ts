/**
 * `usage replay` (docs/BILLING.md, "Replay"): re-sends a tenant's archived usage events
 * of a time range to the sink, with their own ids, a bounded step at a time: the
 * delivered batches of the range's days, then its dead letters, which count as delivered
 * once the sink takes them (their batch moves to `delivered/`). A sink that refuses
 * stops the step (50207); what it took before is counted.
 */
import { GatewayError } from '../errors';
import { guardFor } from '../objects/tenant/tenant-guard';
import type { UsageCloudEvent } from '../types/billing';
import type { Bindings } from '../types/context';
import type { Settings } from '../types/settings';
import type { ReplayStep } from '../types/wire';
import { type ArchiveState, dayName } from './archive';
import { requestsOf } from './events';
import { deliver } from './sink';

/** Archived batches one step reads: at most 2,000 events, 20 sink calls. */
export const REPLAY_BATCHES = 20;
const SINK_BATCH = 100;
const ORDER: ArchiveState[] = ['delivered', 'dead'];

export async function replayStep(
  env: Bindings,
  settings: Settings,
  bucket: R2Bucket,
  tenant: string,
  range: { from: number; to: number },
  cursor: string | undefined,
): Promise<ReplayStep> {
  const [firstDay, lastDay] = [dayName(range.from), dayName(range.to)];
  let [state, after] = cursorOf(cursor);
  const step: ReplayStep = { tenant_id: tenant, sent: 0, batches: 0, recovered: 0, cursor: null };
  const byDay = new Map<number, { sent: number; recovered: number }>();
  try {
    while (step.batches < REPLAY_BATCHES) {
      const prefix = `${state}/${tenant}/`;
      const from = `${prefix}${firstDay}`;
      const page = await bucket.list({
        prefix,
        startAfter: after > from ? after : from,
        limit: REPLAY_BATCHES - step.batches,
      });
      let done = !page.truncated;
      for (const o of page.objects) {
        if (o.key.slice(prefix.length, prefix.length + 10) > lastDay) {
          done = true;
          break;
        }
        await replayBatch(o.key);
        after = o.key;
      }
      if (!done) continue;
      const next = ORDER[ORDER.indexOf(state) + 1];
      if (!next) return step;
      [state, after] = [next, ''];
    }
    step.cursor = `${state}|${after}`;
    return step;
  } finally {
    const part = guardFor(env, tenant).export();
    for (const [day, n] of byDay) await part.replayed(day, n.sent, n.recovered);
  }

  async function replayBatch(key: string): Promise<void> {
    const object = await bucket.get(key);
    step.batches++;
    if (!object) return;
    const archived = await object.json<UsageCloudEvent[]>();
    const events = archived.filter((e) => {
      const t = Date.parse(e.time);
      return t >= range.from && t <= range.to;
    });
    for (let i = 0; i < events.length; i += SINK_BATCH) {
      const chunk = events.slice(i, i + SINK_BATCH);
      const outcome = await deliver(chunk, settings);
      if (!outcome.ok) {
        throw new GatewayError('USAGE_SINK_FAILED', {
          details: { why: outcome.why, sent: step.sent },
        });
      }
      const requests = chunk.reduce((n, e) => n + requestsOf(e), 0);
      step.sent += chunk.length;
      tally(key).sent += requests;
    }
    // Dead letters the sink has now taken are delivered: their whole batch, or none of it.
    if (state === 'dead' && events.length === archived.length && events.length > 0) {
      await bucket.put(key.replace(/^dead\//, 'delivered/'), JSON.stringify(archived), {
        httpMetadata: { contentType: 'application/json' },
        customMetadata: object.customMetadata ?? {},
      });
      await bucket.delete(key);
      step.recovered += archived.length;
      tally(key).recovered += archived.reduce((n, e) => n + requestsOf(e), 0);
    }
  }

  /** What this step did for the day of an archived batch (`<state>/<tenant>/<day>/…`). */
  function tally(key: string): { sent: number; recovered: number } {
    const day = Date.parse(`${key.split('/')[2]}T00:00:00Z`);
    let t = byDay.get(day);
    if (!t) {
      t = { sent: 0, recovered: 0 };
      byDay.set(day, t);
    }
    return t;
  }
}

/** Where a step starts: the archive's state and the last key done. */
function cursorOf(cursor: string | undefined): [ArchiveState, string] {
  const [state, after = ''] = (cursor ?? '').split('|', 2);
  return state === 'dead' ? ['dead', after] : ['delivered', after];
}
