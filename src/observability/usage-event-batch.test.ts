import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isolateCounters } from '../stats';
import type { UsageMessage, UsageRecord } from '../types/billing';
import { BATCH_WAIT_MS, MAX_EVENTS, UsageEventBatch } from './usage-event-batch';

/** A stand-in for the Queue binding: the request ids each message carried; the first `failures` sends throw. */
function queue(failures = 0) {
  const messages: string[][] = [];
  const sizes: number[] = [];
  let calls = 0;
  const q = {
    send: async (body: UsageMessage, options?: QueueSendOptions) => {
      calls++;
      if (calls <= failures) throw new Error('queue unavailable');
      if (!('kind' in body) || body.kind !== 'pack' || options?.contentType !== 'json') {
        throw new Error('not a JSON pack');
      }
      messages.push(body.records.map((r) => r.id));
      sizes.push(new TextEncoder().encode(JSON.stringify(body)).byteLength);
    },
  };
  return { q: q as unknown as Queue<UsageMessage>, batches: messages, sizes, calls: () => calls };
}

const record = (i: number): UsageRecord => ({
  id: `req_${i}`,
  rid: `req_${i}`,
  at: 0,
  tenant: 'ten_a',
  token: 'tok_a',
  op: 'team.list',
  plan: null,
  status: 200,
  cost: 1,
  ms: 3,
  bytes: 10,
  cache: null,
  via: 'http',
});

describe('UsageEventBatch', () => {
  let kept: Promise<unknown>[];
  const waitUntil = (p: Promise<unknown>) => kept.push(p);
  beforeEach(() => {
    kept = [];
    vi.useFakeTimers();
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('sends a full batch at once as one message, the rest once the first of it waited, each event once', async () => {
    const { q, batches } = queue();
    const batch = new UsageEventBatch();
    const n = 2 * MAX_EVENTS + 50;
    for (let i = 0; i < n; i++) batch.add(q, record(i), waitUntil);
    await vi.advanceTimersByTimeAsync(0);
    expect(batches.map((b) => b.length)).toEqual([MAX_EVENTS, MAX_EVENTS]);
    await vi.advanceTimersByTimeAsync(BATCH_WAIT_MS);
    await Promise.all(kept);
    expect(batches.map((b) => b.length)).toEqual([MAX_EVENTS, MAX_EVENTS, 50]);
    expect(batches.flat()).toEqual(Array.from({ length: n }, (_, i) => `req_${i}`));
    // Each batch is kept alive by a request's waitUntil: its first (timer) or its last (full).
    expect(kept.length).toBe(5);
  });

  it("keeps a message under the queue's size limit whatever its records hold", async () => {
    const { q, batches, sizes } = queue();
    const batch = new UsageEventBatch();
    // Long caller-chosen request ids: 2 KB records, so about 19 of them make a message.
    const big = (i: number) => ({ ...record(i), id: `${'x'.repeat(2000)}-${i}` });
    for (let i = 0; i < 50; i++) batch.add(q, big(i), waitUntil);
    await vi.advanceTimersByTimeAsync(BATCH_WAIT_MS);
    await Promise.all(kept);
    expect(batches.flat()).toHaveLength(50);
    expect(batches.length).toBeGreaterThan(1);
    // Queues takes a message of at most 128 KB.
    for (const size of sizes) expect(size).toBeLessThanOrEqual(128 * 1024);
  });

  it('tries a refused message once more, then counts and logs its events as lost', async () => {
    const once = queue(1);
    const batch = new UsageEventBatch();
    batch.add(once.q, record(1), waitUntil);
    await vi.advanceTimersByTimeAsync(2 * BATCH_WAIT_MS);
    await Promise.all(kept);
    expect(once.batches).toEqual([['req_1']]);

    const lostBefore = isolateCounters.usage_events_lost;
    const down = queue(2);
    batch.add(down.q, record(2), waitUntil);
    batch.add(down.q, record(3), waitUntil);
    await vi.advanceTimersByTimeAsync(3 * BATCH_WAIT_MS);
    await Promise.all(kept);
    expect(down.calls()).toBe(2);
    expect(isolateCounters.usage_events_lost - lostBefore).toBe(2);
    const line = JSON.parse(vi.mocked(console.error).mock.calls.at(-1)?.[0] as string);
    expect(line).toMatchObject({
      event: 'usage.events_not_sent',
      events: 2,
      request_ids: ['req_2', 'req_3'],
    });
  });
});
