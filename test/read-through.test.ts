/**
 * The read-through cache on the real Cache API with injected time: freshness,
 * stale-while-revalidate with one background refresh, expiry, coalescing.
 */
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { type ReadThrough, readThrough } from '../src/cache/read-through';
import type { UpstreamResult } from '../src/upstream/normalize';

const policy = { ttl_s: 60, grace_s: 300 };
const T0 = Date.parse('2026-11-21T10:00:00Z');

function upstream(code = 0) {
  let calls = 0;
  const fetchFresh = async (): Promise<UpstreamResult> => {
    calls++;
    const envelope = { code, msg: code ? 'no' : 'Success', data: { version: calls } };
    return { status: 200, text: JSON.stringify(envelope), envelope };
  };
  return { fetchFresh, calls: () => calls };
}

async function read(
  key: string,
  fetchFresh: ReadThrough['fetchFresh'],
  now: number,
  revalidate = false,
) {
  const ctx = createExecutionContext();
  const outcome = await readThrough({
    key,
    policy,
    revalidate,
    fetchFresh,
    now,
    waitUntil: (p) => ctx.waitUntil(p),
  });
  await waitOnExecutionContext(ctx);
  return { ...outcome, data: JSON.parse(outcome.result.text).data };
}

const freshKey = () => `https://gateway-cache.invalid/test/${crypto.randomUUID()}`;

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
    expect(await read(key, up.fetchFresh, T0 + 1, true)).toMatchObject({
      status: 'MISS',
      data: { version: 2 },
    });
  });

  it('coalesces concurrent misses into one upstream call', async () => {
    const key = freshKey();
    let calls = 0;
    const slow = async (): Promise<UpstreamResult> => {
      calls++;
      await new Promise((r) => setTimeout(r, 50));
      const envelope = { code: 0, msg: 'Success', data: {} };
      return { status: 200, text: JSON.stringify(envelope), envelope };
    };
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => read(key, slow, T0)));
    expect(calls).toBe(1);
    expect(outcomes.every((o) => o.status === 'MISS')).toBe(true);
  });
});
