/**
 * One tenant's trouble stays its own (docs/RESILIENCE.md, "One key's trouble
 * stays its own"): tenants on different platform keys of the emulator, one
 * key misbehaving (faults aimed with `platform_key`), the others' reads
 * still answered by the platform. Each test has its own emulator lane (its
 * own failure state in the isolate) and its own platform keys. The gateway's
 * clock is the test's (Date faked, frozen at each test's start): a pause lasts
 * until the test moves the clock past it, however slow the calls in between.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ERRORS } from '../src/errors';
import {
  ADMIN_TOKEN,
  envelope,
  expectRefusal,
  gatewayWith,
  injectFault,
  requestId,
  secondsHeader,
  tenantWithOwnKey,
  UPSTREAM,
  upstreamSaw,
} from './helpers';

beforeEach(() => vi.useFakeTimers({ toFake: ['Date'], now: Date.now() }));
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

/** Moves the gateway's clock on by `ms`. */
const later = (ms: number) => vi.setSystemTime(Date.now() + ms);

const HUGE = 1_000_000_000;
/** Limits that never refuse: these tests are about the platform's failures, not the tenants'. */
const NEVER_REFUSED = JSON.stringify({
  policies: [{ name: 'burst', limit: HUGE, window_s: 10 }],
  quota: { daily: HUGE, monthly: HUGE },
});

type Tenant = Awaited<ReturnType<typeof tenantWithOwnKey>>;

/** A tenant on a platform key of its own. */
const tenantOnOwnKey = (label: string) => tenantWithOwnKey(`noisy neighbour ${label}`);

function newLane() {
  const name = `nn${crypto.randomUUID().slice(0, 12)}`;
  return { name, base: `${UPSTREAM}/__lane/${name}` };
}
type Lane = ReturnType<typeof newLane>;

async function read(lane: Lane, as: Tenant, path: string, settings: Record<string, string> = {}) {
  const id = requestId('nn');
  const res = await gatewayWith(
    { PLATFORM_BASE_URL: lane.base, DEFAULT_LIMITS: NEVER_REFUSED, ...settings },
    path,
    { headers: { authorization: `Bearer ${as.token}`, 'x-request-id': id } },
  );
  return { res, id, body: await envelope(res) };
}

/** A's read answered by the platform itself: 200, code 0, not stale, one platform call. */
async function expectAnsweredByPlatform(r: Awaited<ReturnType<typeof read>>): Promise<void> {
  expect([r.res.status, r.body.code]).toEqual([200, 0]);
  expect(r.res.headers.get('x-stale-reason')).toBeNull();
  expect(await upstreamSaw(r.id)).toHaveLength(1);
}

// Six tenants and dozens of calls a test: more than the default 20 s on a loaded machine.
describe("one key's failures", { timeout: 60_000 }, () => {
  const settings = { CIRCUIT_COOLDOWN_S: '1' };

  it("B's 500s open B's breaker only: A's reads stay 200, and /admin/stats names no key", async () => {
    const lane = newLane();
    const [a, b] = [await tenantOnOwnKey('a'), await tenantOnOwnKey('b')];
    await injectFault({
      lane: lane.name,
      kind: 'status',
      status: 500,
      platform_key: b.platformKey,
      for_ms: 60_000,
    });
    // Five failures in a row: B's breaker opens (before, so did the one breaker of the upstream).
    for (let i = 0; i < 5; i++) {
      await expectRefusal(await read(lane, b, '/agent/lists', settings), 'UPSTREAM_HTTP_ERROR');
    }
    for (let i = 0; i < 5; i++) {
      await expectAnsweredByPlatform(await read(lane, a, '/agent/lists', settings));
    }
    // B's own breaker is open: B is answered at once, with Retry-After and no platform call.
    const refused = await read(lane, b, '/agent/lists', settings);
    const body = await expectRefusal(refused, 'UPSTREAM_UNAVAILABLE');
    expect(body.data).toMatchObject({ scope: 'key', retry_after_s: 1 });
    expect(secondsHeader(refused.res, 'retry-after')).toBe(1);
    expect(await upstreamSaw(refused.id)).toHaveLength(0);
    await expectAnsweredByPlatform(await read(lane, a, '/agent/lists', settings));

    const stats = await gatewayWith({}, '/admin/stats', {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const text = await stats.text();
    expect(JSON.parse(text).data.isolate.breakers[lane.base]).toEqual({
      state: 'closed',
      held: false,
      keys: 2,
      keys_open: 1,
      keys_half_open: 0,
      keys_held: 0,
    });
    expect(text).not.toContain(b.platformKey);

    // After the cool-down (the Retry-After B was given), B's probe reaches the platform.
    later(1000 * secondsHeader(refused.res, 'retry-after'));
    const probe = await read(lane, b, '/agent/lists', settings);
    expect(probe.body.code).toBe(ERRORS.UPSTREAM_HTTP_ERROR.code);
    expect(await upstreamSaw(probe.id)).toHaveLength(1);
  });

  it("B's reads that hang past their deadline leave A's reads at 200", async () => {
    const lane = newLane();
    const [a, b] = [await tenantOnOwnKey('a'), await tenantOnOwnKey('b')];
    const deadline = { ROUTE_OVERRIDES: JSON.stringify({ 'agent.list': { timeout_ms: 200 } }) };
    await injectFault({
      lane: lane.name,
      kind: 'hang',
      delay_ms: 5000,
      platform_key: b.platformKey,
      for_ms: 60_000,
    });
    // Five of B's reads time out together, while A reads.
    const [timeouts, ...fromA] = await Promise.all([
      Promise.all(Array.from({ length: 5 }, () => read(lane, b, '/agent/lists', deadline))),
      read(lane, a, '/agent/lists', deadline),
      read(lane, a, '/agent/lists', deadline),
    ]);
    for (const t of timeouts) await expectRefusal(t, 'UPSTREAM_TIMEOUT');
    for (const r of fromA) await expectAnsweredByPlatform(r);
    for (let i = 0; i < 5; i++) {
      await expectAnsweredByPlatform(await read(lane, a, '/agent/lists', deadline));
    }
    const refused = await read(lane, b, '/agent/lists', deadline);
    expect((await expectRefusal(refused, 'UPSTREAM_UNAVAILABLE')).data.scope).toBe('key');
  });

  it('three of six keys failing (500s, connection resets) while three succeed: the three get every answer', async () => {
    const lane = newLane();
    const tenants: Tenant[] = [];
    for (const label of ['h1', 'h2', 'h3', 'f1', 'f2', 'f3'])
      tenants.push(await tenantOnOwnKey(label));
    const healthy = tenants.slice(0, 3);
    const failing = tenants.slice(3);
    // All six were working before three tenants' own calls began to fail.
    for (const t of tenants) await expectAnsweredByPlatform(await read(lane, t, '/agent/lists'));
    const faults = [
      { kind: 'status', status: 500 },
      { kind: 'status', status: 500 },
      { kind: 'reset' },
    ];
    for (const [i, fault] of faults.entries()) {
      const platform_key = failing[i]?.platformKey;
      await injectFault({ lane: lane.name, ...fault, platform_key, for_ms: 60_000 });
    }
    const failingCodes = new Set<number>();
    for (let round = 0; round < 6; round++) {
      // Each round's reads overlap: three from each failing tenant, one from each healthy one.
      const fromFailing = failing.flatMap((t) =>
        [1, 2, 3].map(() => read(lane, t, '/agent/lists')),
      );
      const fromHealthy = healthy.map((t) => read(lane, t, '/agent/lists'));
      const [bad, good] = await Promise.all([Promise.all(fromFailing), Promise.all(fromHealthy)]);
      for (const r of good) await expectAnsweredByPlatform(r);
      for (const r of bad) {
        failingCodes.add(r.body.code);
        if (r.body.code === ERRORS.UPSTREAM_UNAVAILABLE.code) expect(r.body.data.scope).toBe('key');
      }
    }
    // The failing tenants' own breakers did open: they were refused at once, for their key only.
    expect(failingCodes).toContain(ERRORS.UPSTREAM_UNAVAILABLE.code);
    const stats = await gatewayWith({}, '/admin/stats', {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect((await envelope(stats)).data.isolate.breakers[lane.base]).toMatchObject({
      state: 'closed',
      keys: 6,
      keys_open: 3,
    });
  });

  it("every key failing opens the upstream's breaker within the window: a key is then held after its own first failure", async () => {
    const lane = newLane();
    const tenants: Tenant[] = [];
    for (const label of ['a', 'b', 'c', 'd', 'e', 'f']) tenants.push(await tenantOnOwnKey(label));
    const [a, b, c, d] = tenants as [Tenant, Tenant, Tenant, Tenant];
    for (const t of tenants) await expectAnsweredByPlatform(await read(lane, t, '/agent/lists'));
    await injectFault({ lane: lane.name, kind: 'status', status: 500, for_ms: 60_000 });
    // The gateway's clock stands still: all of this happens within one window.
    // Five failures each open A's, B's and C's own breakers (a 500 is not retried).
    for (const failing of [a, b, c]) {
      for (let i = 0; i < 5; i++) {
        await expectRefusal(await read(lane, failing, '/agent/lists'), 'UPSTREAM_HTTP_ERROR');
      }
    }
    const stats = await gatewayWith({}, '/admin/stats', {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect((await envelope(stats)).data.isolate.breakers[lane.base]).toMatchObject({
      state: 'open',
      keys_open: 3,
    });
    // D's latest call had succeeded: it reaches the platform once, and learns of the outage.
    const learns = await read(lane, d, '/agent/lists');
    await expectRefusal(learns, 'UPSTREAM_HTTP_ERROR');
    expect((await upstreamSaw(learns.id)).length).toBeGreaterThan(0);
    // Then D is answered at once, by the upstream's breaker (its own has not opened).
    const refused = await read(lane, d, '/agent/lists');
    const body = await expectRefusal(refused, 'UPSTREAM_UNAVAILABLE');
    expect(body.data.scope).toBe('upstream');
    expect(body.msg).not.toContain('platform key');
    expect(await upstreamSaw(refused.id)).toHaveLength(0);
  });
});

describe('pauses the platform asks of one key', () => {
  it("B's 503 with Retry-After: 300 does not hold A, and holds B for at most MAX_PLATFORM_PAUSE_S", async () => {
    const lane = newLane();
    const [a, b] = [await tenantOnOwnKey('a'), await tenantOnOwnKey('b')];
    const settings = { MAX_PLATFORM_PAUSE_S: '2' };
    await injectFault({
      lane: lane.name,
      kind: 'status',
      status: 503,
      retry_after: 300,
      platform_key: b.platformKey,
      for_ms: 60_000,
    });
    const first = await read(lane, b, '/agent/lists', settings);
    await expectRefusal(first, 'UPSTREAM_BACKING_OFF');
    // B is told the gateway's hold; the platform's own Retry-After travels beside it.
    expect(first.res.headers.get('retry-after')).toBe('2');
    expect(first.res.headers.get('x-platform-retry-after')).toBe('300');
    expect(first.body.data).toMatchObject({
      upstream_status: 503,
      retry_after_s: 2,
      platform_retry_after_s: 300,
    });

    // A is not held (before, every key was, for five minutes), nor answered stale.
    await expectAnsweredByPlatform(await read(lane, a, '/agent/lists', settings));
    await expectAnsweredByPlatform(await read(lane, a, '/team/lists?page_size=7', settings));

    const held = await read(lane, b, '/agent/lists', settings);
    const heldBody = await expectRefusal(held, 'UPSTREAM_BACKING_OFF');
    expect(heldBody.data).toMatchObject({ held: true, scope: 'key' });
    const wait = secondsHeader(held.res, 'retry-after');
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(wait).toBeLessThanOrEqual(2);
    expect(await upstreamSaw(held.id)).toHaveLength(0);

    // Once the time B was told has passed, B's next call goes to the platform again.
    later(wait * 1000);
    const after = await read(lane, b, '/agent/lists', settings);
    await expectRefusal(after, 'UPSTREAM_BACKING_OFF');
    expect(await upstreamSaw(after.id)).toHaveLength(1);
  });

  it('503s with Retry-After from three keys, none answered between, hold a key whose own call failed, not one the platform answers', async () => {
    const lane = newLane();
    const keys: Tenant[] = [];
    for (const label of ['a', 'b', 'c', 'd', 'e']) keys.push(await tenantOnOwnKey(label));
    const [a, b, c, d, e] = keys as [Tenant, Tenant, Tenant, Tenant, Tenant];
    for (const t of keys) await expectAnsweredByPlatform(await read(lane, t, '/agent/lists'));
    for (const t of [a, b, c]) {
      await injectFault({
        lane: lane.name,
        kind: 'status',
        status: 503,
        retry_after: 30,
        platform_key: t.platformKey,
      });
    }
    // E's own calls fail twice (a 500 is not retried).
    await injectFault({
      lane: lane.name,
      kind: 'status',
      status: 500,
      times: 2,
      platform_key: e.platformKey,
    });
    await expectRefusal(await read(lane, e, '/agent/lists'), 'UPSTREAM_HTTP_ERROR');
    for (const t of [a, b])
      await expectRefusal(await read(lane, t, '/agent/lists'), 'UPSTREAM_BACKING_OFF');
    // Two keys are not enough: E still reaches the platform.
    const notYet = await read(lane, e, '/agent/lists');
    await expectRefusal(notYet, 'UPSTREAM_HTTP_ERROR');
    expect(await upstreamSaw(notYet.id)).toHaveLength(1);
    await expectRefusal(await read(lane, c, '/agent/lists'), 'UPSTREAM_BACKING_OFF');
    const held = await read(lane, e, '/agent/lists');
    expect((await expectRefusal(held, 'UPSTREAM_BACKING_OFF')).data).toMatchObject({
      held: true,
      scope: 'upstream',
    });
    expect(secondsHeader(held.res, 'retry-after')).toBeLessThanOrEqual(30);
    expect(await upstreamSaw(held.id)).toHaveLength(0);
    // D's latest call was answered: it is not held, and its answer ends the upstream's hold.
    await expectAnsweredByPlatform(await read(lane, d, '/agent/lists'));
    await expectAnsweredByPlatform(await read(lane, e, '/agent/lists'));
  });

  it("every 50302 of a pause says the gateway's remaining hold: 60, then 55 … 5, then the platform is asked again", async () => {
    const lane = newLane();
    const b = await tenantOnOwnKey('b');
    await injectFault({
      lane: lane.name,
      kind: 'status',
      status: 503,
      retry_after: 300,
      platform_key: b.platformKey,
    });
    const first = await read(lane, b, '/agent/lists');
    await expectRefusal(first, 'UPSTREAM_BACKING_OFF');
    const said = [secondsHeader(first.res, 'retry-after')];
    for (let i = 0; i < 11; i++) {
      later(5000);
      const held = await read(lane, b, '/agent/lists');
      expect((await expectRefusal(held, 'UPSTREAM_BACKING_OFF')).data).toMatchObject({
        held: true,
        retry_after_s: secondsHeader(held.res, 'retry-after'),
      });
      expect(held.res.headers.get('x-platform-retry-after')).toBeNull();
      said.push(secondsHeader(held.res, 'retry-after'));
    }
    expect(said).toEqual([60, 55, 50, 45, 40, 35, 30, 25, 20, 15, 10, 5]);
    // A client that obeyed the first answer asks again just as the gateway does.
    later(5000);
    await expectAnsweredByPlatform(await read(lane, b, '/agent/lists'));
  });

  it('holds for at most 60 s by default, whatever the platform asks', async () => {
    const lane = newLane();
    const b = await tenantOnOwnKey('b');
    await injectFault({
      lane: lane.name,
      kind: 'status',
      status: 429,
      retry_after: 86_400,
      platform_key: b.platformKey,
    });
    const first = await read(lane, b, '/agent/lists');
    await expectRefusal(first, 'UPSTREAM_RATE_LIMITED');
    expect(first.res.headers.get('retry-after')).toBe('86400');
    const held = await read(lane, b, '/agent/lists');
    expect((await expectRefusal(held, 'UPSTREAM_RATE_LIMITED')).data.held).toBe(true);
    expect(secondsHeader(held.res, 'retry-after')).toBeLessThanOrEqual(60);
  });
});

describe('the read cache', { timeout: 60_000 }, () => {
  /** Request log lines printed while `run` runs, by request id. */
  async function logged(run: () => Promise<void>): Promise<Map<string, Record<string, unknown>>> {
    const lines = new Map<string, Record<string, unknown>>();
    for (const level of ['log', 'warn', 'error'] as const) {
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
        try {
          const parsed = JSON.parse(args.map(String).join(' '));
          if (parsed.event === 'request') lines.set(parsed.request_id, parsed);
        } catch {
          // Not a log line of the gateway's.
        }
      });
    }
    await run();
    vi.restoreAllMocks();
    return lines;
  }

  it("a flood of distinct cache keys by B leaves A's cached entry an L1 hit", async () => {
    const lane = newLane();
    const [a, b] = [await tenantOnOwnKey('a'), await tenantOnOwnKey('b')];
    // 64 KiB of L1: B's flood (about 300 KiB of entries) is far more than it holds.
    const settings = { L1_CACHE_BYTES: String(64 * 1024) };
    const stored = await read(lane, a, '/team/lists?page_size=3', settings);
    expect(stored.res.headers.get('x-cache')).toBe('MISS');
    const flood = Array.from({ length: 400 }, (_, i) => `/team/lists?page_num=${i + 1}`);
    const quiet = { ...settings, LOG_SAMPLE_RATE: '0' };
    for (let i = 0; i < flood.length; i += 20) {
      const batch = await Promise.all(flood.slice(i, i + 20).map((p) => read(lane, b, p, quiet)));
      for (const r of batch) expect(r.res.headers.get('x-cache')).toBe('MISS');
    }
    let hitA = '';
    let oldB = '';
    const lines = await logged(async () => {
      hitA = (await read(lane, a, '/team/lists?page_size=3', settings)).id;
      oldB = (await read(lane, b, flood[0] ?? '', settings)).id;
    });
    expect(lines.get(hitA)).toMatchObject({ status: 200, cache: 'L1' });
    // The flood did overflow L1: B's own first entries are gone from memory.
    expect(lines.get(oldB)?.cache).not.toBe('L1');
  });
});
