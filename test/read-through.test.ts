/**
 * The tiered read cache on the real Cache API with injected time: L1 and L2
 * hits, freshness, stale-while-revalidate with one background refresh,
 * expiry, and coalescing that survives a leader that never finishes.
 */
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { utf8 } from '../src/bytes';
import { type ReadThrough, readThrough } from '../src/cache/read-through';
import { GatewayError } from '../src/errors';
import type { UpstreamResult } from '../src/upstream/normalize';

const policy = { ttl_s: 60, grace_s: 300 };
const T0 = Date.parse('2026-11-21T10:00:00Z');
const MEMORY = 1024 * 1024;

function upstream(code = 0) {
  let calls = 0;
  const fetchFresh = async (): Promise<UpstreamResult> => {
    calls++;
    const envelope = { code, msg: code ? 'no' : 'Success', data: { version: calls } };
    return { status: 200, body: utf8(JSON.stringify(envelope)), envelope };
  };
  return { fetchFresh, calls: () => calls };
}

interface ReadOptions {
  revalidate?: boolean;
  l1Bytes?: number;
  followerTimeoutMs?: number;
}

async function read(
  key: string,
  fetchFresh: ReadThrough['fetchFresh'],
  now: number,
  o: ReadOptions = {},
) {
  const ctx = createExecutionContext();
  const outcome = await readThrough({
    key,
    owner: 'test-owner',
    policy,
    revalidate: o.revalidate ?? false,
    fetchFresh,
    now,
    waitUntil: (p) => ctx.waitUntil(p),
    l1Bytes: o.l1Bytes ?? MEMORY,
    followerTimeoutMs: o.followerTimeoutMs ?? 2000,
  });
  await waitOnExecutionContext(ctx);
  const data = JSON.parse(new TextDecoder().decode(outcome.result.body)).data;
  return { status: outcome.status, tier: outcome.tier, age: outcome.age, data };
}

const freshKey = () => `["test","${crypto.randomUUID()}"]`;

describe('readThrough', () => {
  it('is fresh for ttl_s, stale for grace_s with one background refresh, then a miss', async () => {
    const key = freshKey();
    const up = upstream();
    expect(await read(key, up.fetchFresh, T0)).toMatchObject({
      status: 'MISS',
      age: 0,
      data: { version: 1 },
    });
    expect(await read(key, up.fetchFresh, T0 + 59_999)).toMatchObject({
      status: 'HIT',
      tier: 'L1',
      age: 59,
      data: { version: 1 },
    });

    // Past the TTL: the stale entry is served at once, a refresh runs behind it.
    expect(await read(key, up.fetchFresh, T0 + 61_000)).toMatchObject({
      status: 'STALE',
      age: 61,
      data: { version: 1 },
    });
    expect(up.calls()).toBe(2);
    expect(await read(key, up.fetchFresh, T0 + 61_000)).toMatchObject({
      status: 'HIT',
      age: 0,
      data: { version: 2 },
    });

    // Past TTL + grace of the refreshed entry: a plain miss.
    expect(await read(key, up.fetchFresh, T0 + 61_000 + 360_000)).toMatchObject({
      status: 'MISS',
      data: { version: 3 },
    });
  });

  it('answers from the Cache API when memory does not hold the entry, with the same rules', async () => {
    const key = freshKey();
    const up = upstream();
    const noMemory = { l1Bytes: 0 };
    await read(key, up.fetchFresh, T0, noMemory);
    expect(await read(key, up.fetchFresh, T0 + 1000, noMemory)).toMatchObject({
      status: 'HIT',
      tier: 'L2',
      age: 1,
      data: { version: 1 },
    });
    expect(await read(key, up.fetchFresh, T0 + 61_000, noMemory)).toMatchObject({
      status: 'STALE',
      tier: 'L2',
    });
    // A hit from L2 fills L1: the next one stays in memory.
    const filled = freshKey();
    await read(filled, up.fetchFresh, T0, noMemory);
    expect((await read(filled, up.fetchFresh, T0 + 1)).tier).toBe('L2');
    expect((await read(filled, up.fetchFresh, T0 + 2)).tier).toBe('L1');
  });

  it('never stores a platform error', async () => {
    const key = freshKey();
    const up = upstream(20001);
    await read(key, up.fetchFresh, T0);
    expect(await read(key, up.fetchFresh, T0 + 1)).toMatchObject({ status: 'MISS' });
    expect(up.calls()).toBe(2);
  });

  it('revalidates on request', async () => {
    const key = freshKey();
    const up = upstream();
    await read(key, up.fetchFresh, T0);
    expect(await read(key, up.fetchFresh, T0 + 1, { revalidate: true })).toMatchObject({
      status: 'MISS',
      data: { version: 2 },
    });
  });

  it('coalesces concurrent misses into one upstream call with identical answers', async () => {
    const key = freshKey();
    let calls = 0;
    const slow = async (): Promise<UpstreamResult> => {
      calls++;
      await new Promise((r) => setTimeout(r, 50));
      const envelope = { code: 0, msg: 'Success', data: { call: calls } };
      return { status: 200, body: utf8(JSON.stringify(envelope)), envelope };
    };
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => read(key, slow, T0)));
    expect(calls).toBe(1);
    expect(outcomes.every((o) => o.status === 'MISS' && o.data.call === 1)).toBe(true);
  });

  it("gives followers the leader's error, not a different one", async () => {
    const key = freshKey();
    let calls = 0;
    const failing = async (): Promise<UpstreamResult> => {
      calls++;
      await new Promise((r) => setTimeout(r, 30));
      throw new GatewayError('UPSTREAM_TIMEOUT');
    };
    const outcomes = await Promise.allSettled(
      Array.from({ length: 5 }, () => read(key, failing, T0)),
    );
    expect(calls).toBe(1);
    for (const o of outcomes) {
      expect(o.status).toBe('rejected');
      if (o.status === 'rejected') expect(o.reason).toMatchObject({ kind: 'UPSTREAM_TIMEOUT' });
    }
  });

  it('lets followers read for themselves when the leader never finishes', async () => {
    const key = freshKey();
    const never = () => new Promise<UpstreamResult>(() => undefined);
    // The leader's request is gone for good; its read never settles.
    void readThrough({
      key,
      owner: 'test-owner',
      policy,
      revalidate: false,
      fetchFresh: never,
      now: T0,
      waitUntil: () => undefined,
      l1Bytes: MEMORY,
      followerTimeoutMs: 50,
    });
    const up = upstream();
    const followers = await Promise.all(
      Array.from({ length: 3 }, () => read(key, up.fetchFresh, T0, { followerTimeoutMs: 50 })),
    );
    expect(followers.every((f) => f.status === 'MISS')).toBe(true);
    expect(up.calls()).toBe(3);
  });
});
