/**
 * When the platform falters (docs/RESILIENCE.md), seen by a caller over real
 * HTTP to the emulator: backpressure from a 429 or 503 with Retry-After, the
 * circuit breaker, bounded retries of reads, per-route deadlines and
 * stale-if-error. Each test has its own emulator lane (`/__lane/<name>`), so
 * the isolate keeps a breaker, holds and a retry budget for it alone.
 *
 * The gateway's clock is the test's (Date faked, frozen at the start of each
 * test): a pause or a cool-down lasts until the test moves the clock past it,
 * however slowly a loaded machine runs the calls in between.
 */
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ERRORS } from '../src/errors';
import {
  createTenant,
  envelope,
  expectRefusal,
  gatewayWith,
  injectFault,
  platformKeys,
  requestId,
  secondsHeader,
  type TestTenant,
  UPSTREAM,
  until,
  upstreamSaw,
} from './helpers';

let tenant: TestTenant;
let second: TestTenant;
beforeAll(async () => {
  tenant = await createTenant(platformKeys.demo, 'resilience');
  second = await createTenant(platformKeys.demoSecond, 'resilience, second key');
});
beforeEach(() => vi.useFakeTimers({ toFake: ['Date'], now: Date.now() }));
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

/** Moves the gateway's clock on by `ms`. */
const later = (ms: number) => vi.setSystemTime(Date.now() + ms);

/** A fresh lane: the same emulator behind a base URL no other test uses. */
function newLane() {
  const name = `r${crypto.randomUUID().slice(0, 12)}`;
  return { name, base: `${UPSTREAM}/__lane/${name}` };
}

/** Platform requests the emulator received on a lane. */
async function platformCalls(lane: string): Promise<number> {
  const res = await fetch(`${UPSTREAM}/__emulator/stats`);
  const stats = (await res.json()) as { requests: Record<string, number> };
  return stats.requests[lane] ?? 0;
}

type Lane = ReturnType<typeof newLane>;

async function call(
  lane: Lane,
  path: string,
  o: { settings?: Record<string, string>; as?: TestTenant; id?: string; init?: RequestInit } = {},
) {
  const id = o.id ?? requestId('res');
  const headers = new Headers(o.init?.headers);
  headers.set('authorization', `Bearer ${(o.as ?? tenant).token}`);
  headers.set('x-request-id', id);
  const started = Date.now();
  const res = await gatewayWith({ PLATFORM_BASE_URL: lane.base, ...o.settings }, path, {
    ...o.init,
    headers,
  });
  return { res, id, body: await envelope(res), ms: Date.now() - started };
}

/** A write the faults below keep from ever being carried out. */
const newSession = (lane: Lane, settings?: Record<string, string>) =>
  call(lane, '/session/create', {
    settings,
    init: {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ team_id: crypto.randomUUID(), task: 'never made' }),
    },
  });

describe('backpressure from the platform', () => {
  it('a 503 with Retry-After is passed on as a 503 with its Retry-After (under MAX_PLATFORM_PAUSE_S), and every call with that platform key waits it out without reaching the platform', async () => {
    const lane = newLane();
    await injectFault({ lane: lane.name, kind: 'status', status: 503, retry_after: 3 });
    const first = await call(lane, '/agent/lists');
    expect(first.res.status).toBe(503);
    expect(first.body.code).toBe(ERRORS.UPSTREAM_BACKING_OFF.code);
    expect(first.res.headers.get('retry-after')).toBe('3');
    expect(first.res.headers.get('x-platform-retry-after')).toBe('3');
    expect(first.body.data).toMatchObject({ upstream_status: 503, retry_after_s: 3 });

    const held = await call(lane, '/agent/lists');
    expect(held.res.status).toBe(503);
    expect(held.body.code).toBe(ERRORS.UPSTREAM_BACKING_OFF.code);
    expect(held.body.data).toMatchObject({ held: true, scope: 'key', request_id: held.id });
    expect(secondsHeader(held.res, 'retry-after')).toBeGreaterThanOrEqual(1);
    // Every call with that key, of any operation, writes included.
    const write = await newSession(lane);
    expect(write.body.code).toBe(ERRORS.UPSTREAM_BACKING_OFF.code);
    expect(await platformCalls(lane.name)).toBe(1);
    // Another platform key is not held: one key's 503 is not the platform's word
    // (docs/RESILIENCE.md, "One key's trouble stays its own").
    const otherKey = await call(lane, '/team/lists', { as: second });
    expect(otherKey.res.status).toBe(200);
    expect(await platformCalls(lane.name)).toBe(2);
  });

  it('a 429 with Retry-After holds the calls made with that platform key only', async () => {
    const lane = newLane();
    await injectFault({
      lane: lane.name,
      kind: 'status',
      status: 429,
      retry_after: 4,
      platform_key: platformKeys.demoSecond,
      for_ms: 60_000,
    });
    const limited = await call(lane, '/agent/lists', { as: second });
    expect(limited.res.status).toBe(429);
    expect(limited.body.code).toBe(ERRORS.UPSTREAM_RATE_LIMITED.code);
    expect(limited.res.headers.get('retry-after')).toBe('4');

    const held = await call(lane, '/agent/lists', { as: second });
    expect(held.res.status).toBe(429);
    expect(held.body.code).toBe(ERRORS.UPSTREAM_RATE_LIMITED.code);
    expect(held.body.data.held).toBe(true);
    expect(await upstreamSaw(held.id)).toHaveLength(0);

    const other = await call(lane, '/agent/lists');
    expect(other.res.status).toBe(200);
    expect(other.body.code).toBe(0);
    expect(await platformCalls(lane.name)).toBe(2);
  });

  it('a 503 without Retry-After is no pause: the next call goes to the platform', async () => {
    const lane = newLane();
    await injectFault({ lane: lane.name, kind: 'status', status: 503, times: 2 });
    const failed = await call(lane, '/agent/lists');
    expect(failed.res.status).toBe(502);
    expect(failed.body.code).toBe(ERRORS.UPSTREAM_HTTP_ERROR.code);
    const next = await call(lane, '/agent/lists');
    expect(next.body.code).toBe(0);
  });
});

describe('circuit breaker', () => {
  const settings = { CIRCUIT_FAILURES: '3', CIRCUIT_COOLDOWN_S: '1' };

  it('opens after failures in a row and answers at once with 50301 and Retry-After, then one probe closes it', async () => {
    const lane = newLane();
    await injectFault({ lane: lane.name, kind: 'status', status: 500, times: 3 });
    for (let i = 0; i < 3; i++) {
      const r = await call(lane, '/agent/lists', { settings });
      expect(r.body.code).toBe(ERRORS.UPSTREAM_HTTP_ERROR.code);
    }
    const open = await call(lane, '/agent/lists', { settings });
    expect(open.res.status).toBe(503);
    expect(open.body.code).toBe(ERRORS.UPSTREAM_UNAVAILABLE.code);
    expect(open.res.headers.get('retry-after')).toBe('1');
    expect(open.body.data.request_id).toBe(open.id);
    expect(await upstreamSaw(open.id)).toHaveLength(0);
    expect(await platformCalls(lane.name)).toBe(3);

    // After the cool-down Retry-After names (the outage is over), the probe goes through
    // and closes it.
    later(secondsHeader(open.res, 'retry-after') * 1000 + 100);
    const probe = await call(lane, '/agent/lists', { settings });
    expect(probe.body.code).toBe(0);
    const after = await call(lane, '/agent/lists', { settings });
    expect(after.body.code).toBe(0);
    expect(await platformCalls(lane.name)).toBe(5);
  });

  it('4xx answers are not failures: the breaker stays closed', async () => {
    const lane = newLane();
    await injectFault({ lane: lane.name, kind: 'status', status: 400, for_ms: 10_000 });
    for (let i = 0; i < 5; i++) {
      const r = await call(lane, '/agent/lists', { settings });
      // The platform's own 400 envelope each time, never the open breaker's 503.
      expect([r.res.status, r.body]).toEqual([
        400,
        { code: 400, msg: 'emulated failure', data: null },
      ]);
    }
    expect(await platformCalls(lane.name)).toBe(5);
  });
});

describe("an upload's failure by its caller is not the platform's", () => {
  const BOUNDARY = '----resiliencetest0upload';
  const head = new TextEncoder().encode(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="files"; filename="a.bin"\r\n\r\n`,
  );
  const tail = new TextEncoder().encode(`\r\n--${BOUNDARY}--\r\n`);

  /** An upload whose body is `head`, then `filler` chunks of 1 KiB, then (unless it stalls) its end. */
  function upload(
    lane: Lane,
    settings: Record<string, string>,
    o: { filler: number; stall?: true },
  ) {
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(head);
        else if (sent <= o.filler) controller.enqueue(new Uint8Array(1024).fill(97));
        // A caller that stops sending: its next bytes never come.
        else if (o.stall) return new Promise<void>(() => undefined);
        else {
          controller.enqueue(tail);
          controller.close();
        }
        sent += 1;
      },
    });
    return call(lane, '/session/upload', {
      settings,
      init: {
        method: 'POST',
        headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
        body,
        // @ts-expect-error: workerd's RequestInit takes `duplex` for a streamed body
        duplex: 'half',
      },
    });
  }

  it("a refusal mid-way (over MAX_UPLOAD_BYTES) does not pass the breaker's probe: the next call is the probe", async () => {
    const lane = newLane();
    const settings = { CIRCUIT_FAILURES: '3', CIRCUIT_COOLDOWN_S: '1', MAX_UPLOAD_BYTES: '4096' };
    await injectFault({ lane: lane.name, kind: 'status', status: 500, times: 3 });
    for (let i = 0; i < 3; i++) await newSession(lane, settings);
    const open = await newSession(lane, settings);
    expect(open.body.code).toBe(ERRORS.UPSTREAM_UNAVAILABLE.code);

    later(secondsHeader(open.res, 'retry-after') * 1000 + 100);
    // No Content-Length: refused once 4 KiB have streamed, the platform's request cut off.
    const refused = await upload(lane, settings, { filler: 64 });
    await expectRefusal(refused, 'PAYLOAD_TOO_LARGE');
    // Still half-open: this failing write is the probe, and opens it again.
    await injectFault({ lane: lane.name, kind: 'status', status: 500, times: 1 });
    const probe = await newSession(lane, settings);
    expect(probe.body.code).toBe(ERRORS.UPSTREAM_HTTP_ERROR.code);
    const after = await newSession(lane, settings);
    expect(after.res.status).toBe(503);
    expect(after.body.code).toBe(ERRORS.UPSTREAM_UNAVAILABLE.code);
  });

  it('a caller too slow to send its body gets 408 40800, and the breaker counts none of it', async () => {
    const lane = newLane();
    // The upload's deadline is at most UPSTREAM_TIMEOUT_MS: a short one, passed for real.
    const settings = { CIRCUIT_FAILURES: '2', UPSTREAM_TIMEOUT_MS: '400' };
    for (let i = 0; i < 2; i++) {
      const slow = await upload(lane, settings, { filler: 2, stall: true });
      const refused = await expectRefusal(slow, 'UPLOAD_TIMEOUT');
      expect(refused.msg).toContain('400 ms');
      expect(refused.data.request_id).toBe(slow.id);
      // The platform got the start of it, then a cut-off body: once the emulator has recorded
      // it (after the cut), it says so.
      await until(async () => (await upstreamSaw(slow.id)).length > 0, 'the cut-off upload');
      expect((await upstreamSaw(slow.id)).map((seen) => seen.complete)).toEqual([false]);
    }
    const whole = await upload(lane, settings, { filler: 2 });
    expect(whole.res.status).toBe(200);
    expect(whole.body.data[0].file_name).toBe('a.bin');
  });
});

describe('bounded retries', () => {
  it('a read that got a 502 or 503 without Retry-After is tried once more', async () => {
    const lane = newLane();
    for (const status of [502, 503]) {
      const id = requestId('retry');
      await injectFault({ request_id: id, kind: 'status', status });
      const r = await call(lane, '/agent/lists', { id });
      expect(r.res.status).toBe(200);
      expect(r.body.code).toBe(0);
      expect(await upstreamSaw(id)).toHaveLength(2);
    }
  });

  it('a write is never retried', async () => {
    const lane = newLane();
    await injectFault({ lane: lane.name, kind: 'status', status: 503, times: 2 });
    const r = await newSession(lane);
    expect(r.res.status).toBe(502);
    expect(r.body.code).toBe(ERRORS.UPSTREAM_HTTP_ERROR.code);
    expect(await platformCalls(lane.name)).toBe(1);
  });

  it('an empty retry budget makes no retry', async () => {
    const lane = newLane();
    const id = requestId('nobudget');
    await injectFault({ request_id: id, kind: 'status', status: 503 });
    const r = await call(lane, '/agent/lists', {
      id,
      settings: { RETRY_BUDGET_RATIO: '0', RETRY_BUDGET_MIN_PER_S: '0' },
    });
    expect(r.body.code).toBe(ERRORS.UPSTREAM_HTTP_ERROR.code);
    expect(await upstreamSaw(id)).toHaveLength(1);
  });
});

describe('per-route deadlines', () => {
  it("an operation's timeout_ms (ROUTE_OVERRIDES) is its deadline", async () => {
    const lane = newLane();
    const id = requestId('deadline');
    await injectFault({ request_id: id, kind: 'hang', delay_ms: 3000 });
    const r = await call(lane, '/agent/lists', {
      id,
      settings: { ROUTE_OVERRIDES: JSON.stringify({ 'agent.list': { timeout_ms: 300 } }) },
    });
    expect(r.res.status).toBe(504);
    expect(r.body.code).toBe(ERRORS.UPSTREAM_TIMEOUT.code);
    expect(r.body.msg).toContain('300 ms');
  });

  it('UPSTREAM_TIMEOUT_MS stays the ceiling', async () => {
    const lane = newLane();
    const id = requestId('ceiling');
    await injectFault({ request_id: id, kind: 'hang', delay_ms: 3000 });
    const r = await call(lane, '/agent/lists', {
      id,
      settings: {
        UPSTREAM_TIMEOUT_MS: '400',
        ROUTE_OVERRIDES: JSON.stringify({ 'agent.list': { timeout_ms: 5000 } }),
      },
    });
    expect(r.body.code).toBe(ERRORS.UPSTREAM_TIMEOUT.code);
    expect(r.body.msg).toContain('400 ms');
  });

  it('refuses a timeout_ms out of bounds, naming the setting', async () => {
    const lane = newLane();
    const r = await call(lane, '/agent/lists', {
      settings: { ROUTE_OVERRIDES: JSON.stringify({ 'agent.list': { timeout_ms: 5 } }) },
    });
    expect(r.res.status).toBe(500);
    expect(r.body.code).toBe(ERRORS.MISCONFIGURED.code);
    expect(r.body.msg).toContain('ROUTE_OVERRIDES');
  });
});

describe('stale-if-error', () => {
  /** team.list fresh for 1 s, no grace, then `staleS` of stale-if-error. */
  const cacheFor = (staleS: number, extra: Record<string, string> = {}) => ({
    ROUTE_OVERRIDES: JSON.stringify({
      'team.list': { cache: { ttl_s: 1, grace_s: 0, stale_if_error_s: staleS } },
    }),
    ...extra,
  });

  async function logged(run: () => Promise<void>): Promise<Record<string, unknown>[]> {
    const lines: string[] = [];
    for (const level of ['log', 'info', 'warn', 'error'] as const) {
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
        lines.push(args.map(String).join(' '));
      });
    }
    await run();
    vi.restoreAllMocks();
    return lines.flatMap((l) => {
      try {
        const parsed = JSON.parse(l);
        return parsed.event === 'request' ? [parsed] : [];
      } catch {
        return [];
      }
    });
  }

  it('answers a failed read from the cache past its grace, saying why, in the headers and the log', async () => {
    const lane = newLane();
    const settings = cacheFor(3600);
    const fresh = await call(lane, '/team/lists', { settings });
    expect(fresh.res.headers.get('x-cache')).toBe('MISS');
    later(1100);
    await injectFault({ lane: lane.name, kind: 'status', status: 500, for_ms: 10_000 });
    let stale: Awaited<ReturnType<typeof call>> | undefined;
    const lines = await logged(async () => {
      stale = await call(lane, '/team/lists', { settings });
    });
    expect(stale?.res.status).toBe(200);
    expect(stale?.body).toEqual(fresh.body);
    expect(stale?.res.headers.get('x-cache')).toBe('STALE');
    expect(stale?.res.headers.get('x-stale-reason')).toBe('platform_error');
    expect(stale?.res.headers.get('warning')).toBe('111 - "stale: platform error"');
    expect(secondsHeader(stale!.res, 'age')).toBeGreaterThanOrEqual(1);
    const line = lines.find((l) => l.request_id === stale?.id);
    expect(line).toMatchObject({ status: 200, cache: 'STALE', stale_reason: 'platform_error' });
  });

  it('with the breaker open, serves stale without calling the platform', async () => {
    const lane = newLane();
    const settings = cacheFor(3600, { CIRCUIT_FAILURES: '2', CIRCUIT_COOLDOWN_S: '30' });
    await call(lane, '/team/lists', { settings });
    later(1100);
    await injectFault({ lane: lane.name, kind: 'status', status: 500, for_ms: 10_000 });
    for (let i = 0; i < 2; i++) await call(lane, '/agent/lists', { settings });
    const before = await platformCalls(lane.name);
    const stale = await call(lane, '/team/lists', { settings });
    expect(stale.res.status).toBe(200);
    expect(stale.res.headers.get('x-stale-reason')).toBe('breaker_open');
    expect(stale.res.headers.get('warning')).toContain('platform unavailable');
    expect(await platformCalls(lane.name)).toBe(before);
  });

  it('not past stale_if_error_s: then the failure is the answer', async () => {
    const lane = newLane();
    const settings = cacheFor(0);
    await call(lane, '/team/lists', { settings });
    later(1100);
    await injectFault({ lane: lane.name, kind: 'status', status: 500, for_ms: 10_000 });
    const r = await call(lane, '/team/lists', { settings });
    expect(r.res.status).toBe(502);
    expect(r.body.code).toBe(ERRORS.UPSTREAM_HTTP_ERROR.code);
    expect(r.res.headers.get('x-stale-reason')).toBeNull();
  });

  it("never for a rejected platform key: that is the tenant's problem, not an outage", async () => {
    const lane = newLane();
    const settings = cacheFor(3600);
    await call(lane, '/team/lists', { settings });
    later(1100);
    await injectFault({ lane: lane.name, kind: 'status', status: 401, for_ms: 10_000 });
    const r = await call(lane, '/team/lists', { settings });
    expect(r.res.status).toBe(502);
    expect(r.body.code).toBe(ERRORS.UPSTREAM_AUTH_REJECTED.code);
  });
});
