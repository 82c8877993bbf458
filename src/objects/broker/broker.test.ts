/**
 * BrokerCore between isolates' leases (Admission, TenantLease) and a root
 * the tenant's guard on node:sqlite, with injected time and no network: what a
 * broker may hand out, what it must refuse, and what it passes through.
 */
import { describe, expect, it, vi } from 'vitest';
import { detachedGuard, revokeAt } from '../../../scripts/sim/tenant-io';
import { Admission, type AdmissionIo } from '../../limits/admission';
import type { LeaseSettings } from '../../limits/lease';
import type { LeaseAnswer, LeaseRequest } from '../../metering/lease-protocol';
import { secondsUntil } from '../../metering/meter-state';
import type { Limits, Scope } from '../../metering/policy';
import { isolateAsk } from '../tenant/limits/lease-ask.fixture';
import { BrokerCore, type BrokerIo } from './broker';

const START = Date.parse('2026-11-24T12:00:00Z');
const tokenA: Scope = { group: 'teams', tokenId: 'tok_a' };
const tokenB: Scope = { group: 'teams', tokenId: 'tok_b' };

/** An isolate's lease settings under `limits`. */
/** A broker (region enam) over a root reached through `acquire`, on the clock `now`. */
function brokerOver(
  acquire: BrokerIo['acquire'],
  now: () => number = () => START,
  more: Partial<BrokerIo> = {},
): BrokerCore {
  return new BrokerCore(
    { name: 't@enam', leaseMs: 5000 },
    { acquire, now, wakeAt: () => undefined, ...more },
  );
}

/** An isolate's way to `broker`, at START. */
function isolateIo(broker: BrokerCore): AdmissionIo {
  return {
    acquire: (req) => broker.acquire(req),
    record: async () => undefined,
    waitUntil: () => undefined,
    now: () => START,
  };
}

function isolateSettings(limits: Limits): LeaseSettings {
  return {
    leaseMaxMs: 1000,
    defaults: limits,
    meterOptions: { partitionShare: 1, largestCost: 1 },
    usageRetentionDays: 90,
  };
}

/** An isolate's request of one unit for `scope` at `now`, as admission makes it. */
const askFor = (limits: Limits, now: number, scope: Scope = tokenA, want = 0): LeaseRequest =>
  isolateAsk(limits, now, scope, { want });

/**
 * One broker over a root that counts each call at once; from `hold()` on, the root's
 * answers wait until the function it returns is called.
 */
function brokerOverHeldRoot(
  limits: Limits,
  now: () => number,
  onRootDecides?: BrokerIo['onRootDecides'],
) {
  const guard = detachedGuard(limits);
  const root = guard.limits;
  let rootCalls = 0;
  let held: Promise<void> | null = null;
  const broker = brokerOver(
    async (req) => {
      rootCalls++;
      const answer = root.acquire(req);
      if (held) await held;
      return answer;
    },
    now,
    { onRootDecides },
  );
  const hold = () => {
    let release = () => {};
    held = new Promise((resolve) => {
      release = resolve;
    });
    return () => {
      held = null;
      release();
    };
  };
  return { root, broker, rootCalls: () => rootCalls, hold };
}

function fleet(limits: Limits, brokers = 2, isolatesPerBroker = 3) {
  let now = START;
  const guard = detachedGuard(limits);
  const root = guard.limits;
  let rootCalls = 0;
  let brokerCalls = 0;
  let rootDown = false;
  /** Every broker answer to an isolate, with its time. */
  const answers: { at: number; answer: LeaseAnswer }[] = [];
  const settings = isolateSettings(limits);
  const made = Array.from({ length: brokers }, (_, b) => {
    const broker = new BrokerCore(
      { name: `t@region${b}`, leaseMs: 5000 },
      {
        acquire: async (req: LeaseRequest) => {
          rootCalls++;
          if (rootDown) throw new Error('Network connection lost.');
          return root.acquire(req);
        },
        now: () => now,
        wakeAt: () => undefined,
      },
    );
    const isolates = Array.from({ length: isolatesPerBroker }, () => {
      const io: AdmissionIo = {
        acquire: async (req) => {
          brokerCalls++;
          const answer = await broker.acquire(req);
          answers.push({ at: now, answer });
          return answer;
        },
        record: async () => undefined,
        waitUntil: () => undefined,
        now: () => now,
      };
      return { admission: new Admission(), io };
    });
    return { broker, isolates };
  });
  const isolates = made.flatMap((m) => m.isolates);
  return {
    guard,
    root,
    brokers: made.map((m) => m.broker),
    isolates,
    settings,
    answers,
    rootCalls: () => rootCalls,
    /** Isolates' calls to their brokers. */
    brokerCalls: () => brokerCalls,
    at: (t: number) => {
      now = t;
    },
    /** The root's calls fail (a network error) while `down`. */
    rootDown: (down: boolean) => {
      rootDown = down;
    },
    /** One request on isolate `i` now; its outcome. */
    admit: async (i: number, scope: Scope = tokenA, cost = 1) => {
      const isolate = isolates[i % isolates.length];
      if (!isolate) throw new Error('no isolate');
      return (await isolate.admission.admit('t', scope, cost, settings, isolate.io)).kind;
    },
    /** One request on isolate `i` now; its decision (refusal and RateLimit meters). */
    decide: async (i: number, scope: Scope = tokenA, cost = 1) => {
      const isolate = isolates[i % isolates.length];
      if (!isolate) throw new Error('no isolate');
      return isolate.admission.admit('t', scope, cost, settings, isolate.io);
    },
  };
}

describe('BrokerCore', () => {
  it('never lets isolates behind several brokers admit more than the limit', async () => {
    const f = fleet({ policies: [{ name: 'burst', limit: 200, window_s: 60 }], quota: {} });
    let admitted = 0;
    // 600 requests over 6 s, round-robin over 6 isolates behind 2 brokers.
    for (let i = 0; i < 600; i++) {
      f.at(START + i * 10);
      if ((await f.admit(i)) === 'admitted') admitted++;
    }
    // Never over; a unit or two may still sit unused in a lease when the window fills.
    expect(admitted).toBeLessThanOrEqual(200);
    expect(admitted).toBeGreaterThanOrEqual(195);
    // The root was asked by the brokers, far less than once per request.
    expect(f.rootCalls()).toBeLessThan(60);
  });

  it('pools no meter of a few units: no region is refused while another holds the last ones', async () => {
    const f = fleet({ policies: [{ name: 'burst', limit: 5, window_s: 60 }], quota: {} });
    const outcomes: string[] = [];
    // Requests alternate between isolates behind the two brokers.
    for (let i = 0; i < 8; i++) {
      f.at(START + i * 10);
      outcomes.push(await f.admit(i));
    }
    expect(outcomes).toEqual([...Array(5).fill('admitted'), ...Array(3).fill('refused')]);
  });

  it('parks nothing of a small meter, even in the first call after the limits changed', async () => {
    const f = fleet({ policies: [{ name: 'burst', limit: 1000, window_s: 60 }], quota: {} });
    // Busy enough that isolates and brokers lease: then the operator sets a small limit.
    for (let i = 0; i < 60; i++) {
      f.at(START + i * 10);
      await f.admit(i);
    }
    const changed: Limits = { policies: [{ name: 'small', limit: 5, window_s: 60 }], quota: {} };
    await f.root.setLimits(changed, changed);
    for (const b of f.brokers) b.apply({ kind: 'reset' });
    // Once isolates' leases have ended: one request on isolate 0, then 50 at once on the
    // other five. A unit parked with isolate 0 or in a pool would leave them short.
    f.at(START + 2000);
    const first = await f.admit(0);
    const rest = await Promise.all(Array.from({ length: 50 }, (_, i) => f.admit(1 + (i % 5))));
    expect([first, ...rest].filter((o) => o === 'admitted')).toHaveLength(5);
  });

  it("answers a refused token from the root's word after a push, and keeps its pool", async () => {
    const f = fleet({ policies: [{ name: 'burst', limit: 1000, window_s: 60 }], quota: {} });
    f.at(START);
    expect(await f.admit(0, tokenA)).toBe('admitted');
    expect(await f.admit(0, tokenB)).toBe('admitted');
    // The operator revokes tok_b at the root, which pushes to its lease holders.
    const push = revokeAt(f.guard, 'tok_b', START + 100);
    expect(f.root.leaseHolders(START + 100)).toEqual(['t@region0']);
    for (const b of f.brokers) b.apply(push);
    // Isolate 1 (same broker, no lease yet) is answered from the pool: no root call.
    f.at(START + 200);
    const before = f.rootCalls();
    expect(await f.admit(1, tokenB)).toBe('refused');
    expect(await f.admit(1, tokenA)).toBe('admitted');
    expect(f.rootCalls()).toBe(before);
    // Isolate 3, behind the other broker, learns it from the root.
    expect(await f.admit(3, tokenB)).toBe('refused');
    // Isolate 0 holds a lease from before: it may use it until the lease ends, not after.
    f.at(START + 1200);
    expect(await f.admit(0, tokenB)).toBe('refused');
  });

  it('lets no answer to a call made before a push undo it', async () => {
    const limits: Limits = { policies: [{ name: 'burst', limit: 1000, window_s: 60 }], quota: {} };
    const guard = detachedGuard(limits);
    const root = guard.limits;
    // The root decides at once, but its answer arrives only when the test says:
    // a call can be answered before the push and land after it.
    const held: (() => void)[] = [];
    let holding = true;
    const broker = brokerOver((req) => {
      const answer = root.acquire(req);
      if (!holding) return Promise.resolve(answer);
      return new Promise((resolve) => held.push(() => resolve(answer)));
    });
    const io = isolateIo(broker);
    const settings = isolateSettings(limits);
    // tok_b is known to the broker and its pool.
    holding = false;
    for (let i = 0; i < 3; i++) await new Admission().admit('t', tokenB, 1, settings, io);
    holding = true;
    // A request of another token makes a root call, answered before the revocation but
    // landing after the push.
    const first = new Admission().admit('t', tokenA, 1, settings, io);
    await Promise.resolve();
    expect(held).toHaveLength(1);
    const answerBefore = held.shift();
    if (!answerBefore) throw new Error('no root call in flight');
    const push = revokeAt(guard, 'tok_b', START);
    broker.apply(push);
    holding = false;
    answerBefore();
    expect((await first).kind).toBe('admitted');
    // Every later request of tok_b is refused from the broker's own state.
    expect((await new Admission().admit('t', tokenB, 1, settings, io)).kind).toBe('refused');
  });

  it("keeps a busy isolate stocked when its tenant has several meters (the bench's tenant)", async () => {
    // A 10 s sliding window (slots of 500 ms), a minute, a day and a month: a lease
    // carries all four, and units given back came back on every one of them.
    const huge = 1_000_000_000;
    const f = fleet(
      {
        policies: [
          { name: 'burst', limit: huge, window_s: 10 },
          { name: 'sustained', limit: huge, window_s: 60 },
        ],
        quota: { daily: huge, monthly: huge },
      },
      1,
      1,
    );
    // 400 requests a second for 10 s; calls counted over the last 5 s.
    let counted = 0;
    for (let i = 0; i < 4000; i++) {
      if (i === 2000) counted = f.brokerCalls();
      f.at(START + 123 + i * 2.5);
      expect(await f.admit(0)).toBe('admitted');
      await new Promise((resolve) => setImmediate(resolve));
    }
    // About 4 calls a second: a renewal per 500 ms slot and a top-up. Before, the
    // demand lost each returned unit once per meter and the broker passed every call
    // made late in a slot through to the root: 0.13 calls a request.
    expect((f.brokerCalls() - counted) / 2000).toBeLessThan(0.02);
  });

  it('stocks an isolate alone in its region quickly after a pause, while the tenant is far from its limits', async () => {
    const f = fleet(
      { policies: [{ name: 'burst', limit: 1_000_000, window_s: 60 }], quota: {} },
      1,
      1,
    );
    // Five bursts of a second at 400 requests a second, 4 s apart (the bench's rounds).
    let t = START + 123;
    for (let burst = 0; burst < 5; burst++) {
      for (let i = 0; i < 400; i++) {
        t += 2.5;
        f.at(t);
        expect(await f.admit(0)).toBe('admitted');
        await new Promise((resolve) => setImmediate(resolve));
      }
      t += 4000;
    }
    // 0.04 calls a request (simulated time: the same every run). Leasing it half a pool,
    // as when units are scarce, it tops up again and again after each pause: 0.065.
    expect(f.brokerCalls() / 2000).toBeLessThan(0.05);
  });

  it('never wakes its timer again and again: a pool asked for later within the slot holds from now', async () => {
    // A minute's window: slots of 3 s, and START is a slot's start.
    const f = fleet(
      { policies: [{ name: 'burst', limit: 100_000, window_s: 60 }], quota: {} },
      1,
      1,
    );
    const [broker] = f.brokers;
    if (!broker) throw new Error('no broker');
    f.at(START + 100);
    expect(await f.admit(0)).toBe('admitted');
    // An isolate renewing ahead, from 1 s on, for a token the broker has not seen:
    // it asks the root for a pool from then, inside the slot the current pool serves.
    f.at(START + 200);
    await broker.acquire({
      now: START + 200,
      start: START + 1000,
      leaseMaxMs: 1000,
      defaults: f.settings.defaults,
      meterOptions: f.settings.meterOptions,
      scopes: [{ group: 'teams', tokenId: 'tok_b', cost: 0, want: 10 }],
      returns: [],
      renewal: true,
    });
    // The Durable Object's timer, run as it would be until the slot ends.
    let wakeUps = 0;
    for (let wake = broker.wakeTime(); wake !== null && wake < START + 3000 && wakeUps < 100; ) {
      f.at(Math.max(wake, START + 200));
      wakeUps++;
      wake = await broker.renew();
    }
    // One renewal ahead. Before, the later pool was kept as the next one, overlapping
    // the current: its renewal time passed at once and the timer woke every millisecond.
    expect(wakeUps).toBeLessThanOrEqual(2);
  });

  it('passes exact-mode tenants through: one root call per request, until a window is known full', async () => {
    const f = fleet({
      policies: [{ name: 'burst', limit: 3, window_s: 60 }],
      quota: {},
      limiter: 'exact',
    });
    const outcomes: string[] = [];
    for (let i = 0; i < 5; i++) {
      f.at(START + i * 10);
      outcomes.push(await f.admit(i));
    }
    expect(outcomes).toEqual(['admitted', 'admitted', 'admitted', 'refused', 'refused']);
    // Requests 0-2 reach the root through broker 0, 3 and 4 through broker 1: the root
    // refuses request 3, and broker 1 then refuses request 4 itself (a refusal lease).
    expect(f.rootCalls()).toBe(4);
    expect(f.root.usage(START, f.settings.defaults).guard_calls.exact_admits).toBe(4);
  });

  it('tells its io when the root is to decide a request: passed through, or its own call, never a renewal', async () => {
    const pooled: Limits = { policies: [{ name: 'burst', limit: 1000, window_s: 60 }], quota: {} };
    const exact: Limits = { ...pooled, limiter: 'exact' };
    for (const limits of [pooled, exact]) {
      let now = START;
      const told: { req: LeaseRequest; now: number }[] = [];
      const { broker, rootCalls } = brokerOverHeldRoot(
        limits,
        () => now,
        (req, at) => told.push({ req, now: at }),
      );
      // The region's first request: nothing is known, its own root call decides it.
      const first = askFor(limits, now);
      expect((await broker.acquire(first)).scopes[0]?.refusal).toBeNull();
      expect(told).toHaveLength(1);
      expect(told[0]?.req).toBe(first);
      expect(told[0]?.now).toBe(START);
      // The next: from the pool (the broker may top it up: its own call, not told), or
      // passed through in exact mode.
      now = START + 10;
      const second = askFor(limits, now);
      expect((await broker.acquire(second)).scopes[0]?.refusal).toBeNull();
      const passed = limits.limiter === 'exact';
      const decided = passed ? [first, second] : [first];
      expect(told.map((t) => t.req)).toEqual(decided);
      expect(told.at(-1)?.now).toBe(passed ? now : START);
      // A renewal of a scope the broker does not know goes to the root too: not told.
      now = START + 20;
      const calls = rootCalls();
      await broker.acquire(isolateAsk(limits, now, tokenB, { cost: 0 }));
      expect(rootCalls()).toBe(calls + 1);
      expect(told).toHaveLength(passed ? 2 : 1);
    }
  });

  it("counts its isolates' calls and reports them to the root with its own", async () => {
    const f = fleet({ policies: [{ name: 'burst', limit: 1000, window_s: 60 }], quota: {} }, 1, 2);
    for (let i = 0; i < 40; i++) {
      f.at(START + i * 50);
      await f.admit(i);
    }
    const calls = f.root.usage(START + 2000, f.settings.defaults).guard_calls;
    expect(calls.broker_acquires + calls.broker_renewals).toBeGreaterThan(0);
    expect(calls.acquires + calls.renewals).toBe(f.rootCalls());
  });

  it('refuses from its pool naming the policy the root names: the one that fits again last', async () => {
    const limits: Limits = {
      policies: [
        { name: 'short', limit: 100, window_s: 10, algorithm: 'fixed' },
        { name: 'long', limit: 100, window_s: 60, algorithm: 'fixed' },
      ],
      quota: {},
    };
    const guard = detachedGuard(limits);
    const root = guard.limits;
    let rootCalls = 0;
    const broker = brokerOver(async (req) => {
      rootCalls++;
      return root.acquire(req);
    });
    const request = () => askFor(limits, START);
    for (let i = 0; i < 100; i++) {
      expect((await broker.acquire(request())).scopes[0]?.refusal).toBeNull();
    }
    // Both windows are spent: the pool refuses on its own, as the root itself would.
    const callsBefore = rootCalls;
    const fromPool = (await broker.acquire(request())).scopes[0]?.refusal;
    expect(rootCalls).toBe(callsBefore);
    const fromRoot = root.acquire(request()).scopes[0]?.refusal;
    expect(fromRoot).toMatchObject({ reason: 'rate', violated: 'long', retryAfter: 60 });
    expect(fromPool).toEqual(fromRoot);
  });

  it('a failed root call is the isolate\'s "unavailable", and the broker tries again next time', async () => {
    let down = true;
    const root = detachedGuard().limits;
    const limits: Limits = { policies: [{ name: 'burst', limit: 10, window_s: 60 }], quota: {} };
    const broker = brokerOver(async (req) => {
      if (down) throw new Error('Network connection lost.');
      return root.acquire(req);
    });
    const io = isolateIo(broker);
    const settings = isolateSettings(limits);
    expect((await new Admission().admit('t', tokenA, 1, settings, io)).kind).toBe('unavailable');
    down = false;
    expect((await new Admission().admit('t', tokenA, 1, settings, io)).kind).toBe('admitted');
  });
});

describe('BrokerCore: refusal leases', () => {
  it('refuses a window the root said is full without asking it, until a push raises the limit', async () => {
    // Exact mode: every request passes through to the root, as it does for small tenants.
    const f = fleet(
      { policies: [{ name: 'burst', limit: 3, window_s: 60 }], quota: {}, limiter: 'exact' },
      1,
      5,
    );
    f.at(START);
    for (let i = 0; i < 3; i++) expect(await f.admit(i)).toBe('admitted');
    expect(f.rootCalls()).toBe(3);
    // The root's last answer said the window is full for a minute: isolate 3, which has
    // not asked yet, is refused by the broker itself.
    f.at(START + 100);
    expect(await f.admit(3)).toBe('refused');
    expect(f.rootCalls()).toBe(3);
    // The operator raises the limit; the root pushes to the broker before answering.
    const changed: Limits = { policies: [{ name: 'burst', limit: 10, window_s: 60 }], quota: {} };
    await f.root.setLimits(changed, changed);
    for (const b of f.brokers) b.apply({ kind: 'reset' });
    expect(await f.admit(4)).toBe('admitted');
    expect(f.rootCalls()).toBe(4);
  });

  it('never answers a scope without its meters: an isolate would admit it uncounted', async () => {
    const limits: Limits = {
      policies: [{ name: 'burst', limit: 2, window_s: 60 }],
      quota: {},
      limiter: 'exact',
    };
    const f = fleet(limits, 1, 1);
    f.at(START);
    expect(await f.admit(0, tokenA)).toBe('admitted');
    expect(await f.admit(0, tokenA)).toBe('admitted');
    // An isolate that has seen tok_b, which this broker has not, asks for tok_a: the
    // broker refuses it from the root's word, and must not answer tok_b as meterless.
    const ask = { cost: 0, want: 0 };
    const req: LeaseRequest = {
      now: START + 10,
      start: START + 10,
      leaseMaxMs: 1000,
      defaults: limits,
      meterOptions: { partitionShare: 1, largestCost: 1 },
      scopes: [
        { ...tokenA, ...ask, cost: 1 },
        { ...tokenB, ...ask },
      ],
      returns: [],
      renewal: false,
    };
    f.at(START + 10);
    const broker = f.brokers[0];
    if (!broker) throw new Error('no broker');
    const answer = await broker.acquire(req);
    expect(answer.scopes[0]?.refusal).toMatchObject({ reason: 'rate', violated: 'burst' });
    for (const grant of answer.scopes) expect(grant.meters).not.toEqual([]);
  });

  it('a saturated window of a second: brokers pool ahead and refuse their isolates themselves', async () => {
    const f = fleet(
      { policies: [{ name: 'per-second', limit: 100, window_s: 1 }], quota: {} },
      2,
      8,
    );
    const admitted: number[] = [];
    let refused = 0;
    // 5x the limit for 3 s: one request every 2 ms, round-robin over 16 isolates.
    for (let t = 0; t < 3000; t += 2) {
      f.at(START + t);
      const outcome = await f.admit(t / 2);
      if (outcome === 'admitted') admitted.push(t);
      else refused++;
    }
    // Never over the limit in any second, and most of it used.
    for (const from of admitted) {
      expect(admitted.filter((t) => t >= from && t < from + 1000).length).toBeLessThanOrEqual(100);
    }
    expect(admitted.length).toBeGreaterThanOrEqual(0.8 * 300);
    // Refusals cost the root nothing: its calls are the brokers' pools, a few a slot.
    expect(f.rootCalls()).toBeLessThan(refused / 5);
  });

  it('pooling ahead refuses for the full window alone: a quota with room is neither named nor shown spent', async () => {
    const f = fleet(
      { policies: [{ name: 'per-second', limit: 100, window_s: 1 }], quota: { daily: 1_000_000 } },
      2,
      8,
    );
    const selfB: Scope = { group: 'self', tokenId: 'tok_b' };
    const refusals = new Map<string, number>();
    let dailyShownSpent = 0;
    let selfRefused = 0;
    // 5x the per-second limit for 3 s; tok_b's own self-service calls (other meters) now and then.
    for (let t = 0; t < 3000; t += 2) {
      f.at(START + t);
      const d = await f.decide(t / 2);
      if (d.kind === 'refused') {
        const r = d.refusal;
        const named = `${r.reason}:${'violated' in r ? r.violated : ''}`;
        refusals.set(named, (refusals.get(named) ?? 0) + 1);
        if (d.meters.some((m) => m.name === 'daily' && m.remaining === 0)) dailyShownSpent++;
      }
      if (t % 500 === 0 && (await f.admit(t / 2 + 1, selfB)) !== 'admitted') selfRefused++;
    }
    // Every refusal is the per-second window's (42900), as the root's own would be.
    expect([...refusals.keys()]).toEqual(['rate:per-second']);
    expect(dailyShownSpent).toBe(0);
    expect(selfRefused).toBe(0);
  });

  it('an answer to a call passed through before a reset is not repeated after it', async () => {
    const limits: Limits = {
      policies: [{ name: 'burst', limit: 3, window_s: 60 }],
      quota: {},
      limiter: 'exact',
    };
    let now = START;
    const { root, broker, rootCalls, hold } = brokerOverHeldRoot(limits, () => now);
    const request = () => askFor(limits, now);
    for (let i = 0; i < 2; i++) {
      expect((await broker.acquire(request())).scopes[0]?.refusal).toBeNull();
    }
    // The third call takes the last unit; the root's answer (the window is full) is held open.
    const release = hold();
    const held = broker.acquire(request());
    await vi.waitFor(() => expect(rootCalls()).toBe(3));
    // Meanwhile the operator raises the limit; the root pushes a reset first.
    const changed: Limits = { ...limits, policies: [{ name: 'burst', limit: 10, window_s: 60 }] };
    await root.setLimits(changed, changed);
    broker.apply({ kind: 'reset' });
    release();
    expect((await held).scopes[0]?.refusal).toBeNull();
    // The next request is the root's to decide, under the raised limit.
    now = START + 100;
    expect((await broker.acquire(request())).scopes[0]?.refusal).toBeNull();
    expect(rootCalls()).toBe(4);
  });

  it('a request the root admitted while a reset dropped the pool still gets its meters (its RateLimit fields)', async () => {
    const limits: Limits = { policies: [{ name: 'burst', limit: 1000, window_s: 60 }], quota: {} };
    const { broker, rootCalls, hold } = brokerOverHeldRoot(limits, () => START);
    const release = hold();
    // The region's first request: the broker asks the root, whose answer is held open.
    const asked = broker.acquire(askFor(limits, START, tokenA, 10));
    await vi.waitFor(() => expect(rootCalls()).toBe(1));
    // Meanwhile an operator change: the broker forgets, so the root's pool is not kept.
    broker.apply({ kind: 'reset' });
    release();
    const answer = await asked;
    const grant = answer.scopes[0];
    expect(grant?.refusal).toBeNull();
    // The isolate takes the admitted request's RateLimit fields from these meters.
    expect(grant?.meters.length).toBeGreaterThan(0);
    const answered = answer.meters.map((m) => m.key);
    expect(answered).toEqual(expect.arrayContaining(grant?.meters ?? []));
    expect(answer.meters.every((m) => m.leased === 0)).toBe(true);
  });

  it("a window that has freed is asked about, though another scope's call is out", async () => {
    const limits: Limits = {
      policies: [{ name: 'burst', limit: 2, window_s: 1 }],
      quota: {},
      limiter: 'exact',
    };
    const guard = detachedGuard(limits);
    const root = guard.limits;
    let now = START;
    const selfB: Scope = { group: 'self', tokenId: 'tok_b' };
    // Answers for tok_b's self-service scope (meters of its own) wait for the test.
    let release = () => {};
    const hold = new Promise<void>((resolve) => {
      release = resolve;
    });
    let selfCalls = 0;
    const broker = brokerOver(
      async (req) => {
        const answer = root.acquire(req);
        if (req.scopes[0]?.group === 'self') {
          selfCalls++;
          await hold;
        }
        return answer;
      },
      () => now,
    );
    const request = (scope: Scope) => askFor(limits, now, scope);
    // tok_a fills its window of a second.
    for (let i = 0; i < 2; i++) {
      expect((await broker.acquire(request(tokenA))).scopes[0]?.refusal).toBeNull();
    }
    expect((await broker.acquire(request(tokenA))).scopes[0]?.refusal).toMatchObject({
      reason: 'rate',
    });
    // Two seconds on the window has freed; tok_b's self-service call is out meanwhile.
    now = START + 2000;
    const selfCall = broker.acquire(request(selfB));
    await vi.waitFor(() => expect(selfCalls).toBe(1));
    expect((await broker.acquire(request(tokenA))).scopes[0]?.refusal).toBeNull();
    release();
    expect((await selfCall).scopes[0]?.refusal).toBeNull();
  });

  it('stops pooling ahead when new limits reset it: a raised limit is not refused as the old one was', async () => {
    const limits: Limits = {
      policies: [{ name: 'per-second', limit: 100, window_s: 1 }],
      quota: {},
    };
    let now = START;
    const { root, broker } = brokerOverHeldRoot(limits, () => now);
    const refusal = async () => (await broker.acquire(askFor(limits, now))).scopes[0]?.refusal;
    // 5x the limit: the window fills, and the broker pools ahead (refusing its isolates).
    let refused = 0;
    for (let t = 0; t < 600; t += 2) {
      now = START + t;
      if (await refusal()) refused++;
    }
    expect(refused).toBeGreaterThan(0);
    // The operator raises the limit tenfold: the root pushes a reset, and there is room.
    const changed: Limits = {
      ...limits,
      policies: [{ name: 'per-second', limit: 1000, window_s: 1 }],
    };
    await root.setLimits(changed, changed);
    broker.apply({ kind: 'reset' });
    const after: unknown[] = [];
    for (let t = 600; t < 640; t += 2) {
      now = START + t;
      after.push(await refusal());
    }
    expect(after).toEqual(Array(after.length).fill(null));
  });

  it('pooling ahead, a failed root call leaves no unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const note = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', note);
    try {
      const f = fleet(
        { policies: [{ name: 'per-second', limit: 100, window_s: 1 }], quota: {} },
        1,
        4,
      );
      // Saturated for a second and a half: the broker pools ahead.
      for (let t = 0; t < 1500; t += 2) {
        f.at(START + t);
        await f.admit(t / 2);
      }
      // Then the root is unreachable while requests keep coming.
      f.rootDown(true);
      const callsBefore = f.rootCalls();
      for (let t = 1500; t < 2500; t += 2) {
        f.at(START + t);
        await f.admit(t / 2);
      }
      expect(f.rootCalls()).toBeGreaterThan(callsBefore);
      await new Promise((resolve) => setTimeout(resolve, 0));
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', note);
    }
  });

  it('forgets scopes idle for a minute while it passes calls through (browser partitions come and go)', async () => {
    const limits: Limits = {
      policies: [{ name: 'per-second', limit: 100, window_s: 1 }],
      quota: {},
    };
    const guard = detachedGuard(limits);
    const root = guard.limits;
    let now = START;
    const brokerAsks: number[] = [];
    const broker = brokerOver(
      async (req) => {
        // The broker's own calls name it; an isolate's passed through do not.
        if (req.holder) brokerAsks.push(req.scopes.length);
        return root.acquire(req);
      },
      () => now,
    );
    const request = (scope: Scope) => askFor(limits, now, scope);
    // Two minutes of browser tokens, each seen once: a new partition every 100 ms.
    for (let i = 0; i < 1200; i++) {
      now = START + i * 100;
      await broker.acquire(request({ ...tokenA, partition: `p${i}` }));
    }
    // Then the tenant's window fills: the broker asks the root ahead for its scopes.
    now = START + 120_000;
    brokerAsks.length = 0;
    for (let i = 0; i < 150; i++) await broker.acquire(request(tokenA));
    expect(brokerAsks.length).toBeGreaterThan(0);
    // Only scopes seen within the last minute (about 600 partitions), not all 1,200.
    expect(Math.max(...brokerAsks)).toBeLessThanOrEqual(650);
  });

  it("pooling ahead, a refusal's Retry-After is when its meters fit again, as the isolate repeats it", async () => {
    // A 4 s window (slots of 200 ms): the root's refusal says when the window frees; the
    // broker's next pool holds units sooner, and its isolates repeat the refusal until then.
    const f = fleet({ policies: [{ name: 'per-4s', limit: 100, window_s: 4 }], quota: {} }, 2, 8);
    for (let t = 0; t < 3000; t += 2) {
      f.at(START + t);
      // Once the window is full, a second token's requests start: its scope is new to
      // every isolate, so they ask their broker, which refuses them (the first token's
      // isolates have heard the window is full from their own renewals).
      await f.admit(t / 2, t >= 1500 && t % 4 === 0 ? tokenB : tokenA);
    }
    let checked = 0;
    for (const { at, answer } of f.answers) {
      const refusal = answer.scopes[0]?.refusal;
      if (refusal?.reason !== 'rate') continue;
      const fits = answer.meters.flatMap((m) => (m.fitsAgainAt === null ? [] : [m.fitsAgainAt]));
      expect(refusal.retryAfter).toBe(secondsUntil(Math.max(...fits), at));
      checked++;
    }
    expect(checked).toBeGreaterThan(0);
  });
});
