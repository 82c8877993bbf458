/**
 * One scenario on one design, in simulated time: every isolate runs the
 * gateway's own admission (src/limits/admission.ts) and lease
 * (src/limits/lease.ts); every tenant's root TenantGuard runs its parts
 * (src/objects/tenant/parts.ts) on node:sqlite; calls between them go through
 * SimObject (round trips from the world table, one thread per object).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Admission, type AdmissionIo, type AdmissionResult } from '../../src/limits/admission';
import type { LeaseSettings } from '../../src/limits/lease';
import { DIRECT_FOR_MS, shardOf } from '../../src/limits/region';
import type { LeaseRequest } from '../../src/metering/lease-protocol';
import type { Scope } from '../../src/metering/policy';
import { BrokerCore } from '../../src/objects/broker/broker';
import { spreadAdvice } from '../../src/objects/broker/broker-shards';
import type { TenantParts } from '../../src/objects/tenant/parts';
import { Clock } from './clock';
import { busiestWindow, Tally, type WaitedOn } from './metrics';
import type { Scenario, TenantSpec } from './scenarios';
import { detachedGuard, revokeAt } from './tenant-io';
import { SimObject } from './transport';
import { type DataCenter, dataCenters, isolatesFor, type Region, random, regions } from './world';

/** How isolates reach a tenant's guard: the root directly, or a broker in their region. */
export type Design = 'flat' | 'regional';

/** 2026-11-24T00:00:00Z: the simulated clock starts at a UTC midnight. */
const T0 = Date.UTC(2026, 10, 24);
/** Where operator actions come from: a round trip to the root guard. */
const OPERATOR_RTT_MS = 60;
const LEASE_MAX_MS = 1000;
/** The cold start: every isolate's first call falls in it, before hot brokers have split. */
export const SETTLED_AFTER_MS = 2000;

/** The brokers' lease from the root (BROKER_LEASE_MS), before slot ends cut it. */
export const BROKER_LEASE_MS = 5000;

export interface TenantResult {
  id: string;
  limit: number;
  windowS: number;
  /** The most admitted in any window of the tenant's policy, by when it was decided. */
  busiest: number;
  /** The same, by when the answer reached the isolate (a one-way trip later for guard answers). */
  busiestDelivered: number;
  admitted: number;
  /**
   * Under saturation: the mean, over windows ending in the scenario's
   * saturated span, of what each window admitted / the limit (null: none).
   */
  utilisation: number | null;
  /** From the operator action's answer to the last request it should have stopped, ms. */
  actionLagMs: number | null;
}

export interface RunResult {
  scenario: string;
  design: Design;
  tally: Tally;
  tenants: TenantResult[];
  /** Calls to Durable Objects (roots and brokers) per request. */
  callsPerRequest: number;
  /** The most calls any one object answered in one second, and which. */
  busiestObject: { name: string; callsPerSecond: number };
  /** The same from SETTLED_AFTER_MS on: after the cold start (brokers split within it). */
  busiestSettled: { name: string; callsPerSecond: number };
  rootCallsPerRequest: number;
  /** Calls Durable Objects refused because too much work was queued (transport.ts). */
  overloaded: number;
  wallMs: number;
}

interface Isolate {
  dc: DataCenter;
  admission: Admission;
  io: Map<string, IsolateTenant>;
  /** How many brokers per region each tenant is spread over, as its brokers advised. */
  shards: Map<string, number>;
  /** Until when each tenant's calls go to the root directly, as its broker advised. */
  directUntil: Map<string, number>;
}

/** A refusal's Retry-After in seconds (a 503 says 1, as the gateway's does). */
function retryAfterS(result: AdmissionResult): number {
  if (result.kind === 'refused' && 'retryAfter' in result.refusal) return result.refusal.retryAfter;
  return 1;
}

/** One isolate's way to one tenant's guard, and what its calls waited for. */
interface IsolateTenant {
  io: AdmissionIo;
  /** Requests waiting for a call to settle (admission's waitFor), woken when one does. */
  waiters: Set<() => void>;
  /** Calls whose answer waited for the root (all of them in the flat design). */
  rootWaits: number;
}

/** Per simulated request: the time of the guard call it made itself, if it made one. */
interface RequestContext {
  callNow: number | null;
}
const requestContext = new AsyncLocalStorage<RequestContext>();

/**
 * When the root counted an isolate request that a broker had it decide (a call passed
 * through, or the request's own call when the pool could not answer it): the root
 * counts as of the `now` of the call, which the broker reports (BrokerIo.onRootDecides).
 * Any other request a broker admits is counted in its pool's slot, as of the broker's answer.
 */
const decidedAt = new WeakMap<LeaseRequest, number>();

/** Notes a waiting request's own call (renewals run in its context too, and are not it). */
function noteCall(req: LeaseRequest): false {
  const context = requestContext.getStore();
  if (context && !req.renewal) context.callNow = req.now;
  return false;
}

interface Broker {
  object: SimObject<BrokerCore>;
  /** Round trip between the broker and the root. */
  rootRtt: number;
  /** Root calls it has had answered (a request that waited across one waited on the root). */
  rootAnswers: number;
  /** The pending alarm, as the Durable Object keeps one. */
  alarm: number | null;
}

/** The default seed of the arrivals' generator: every run is the same run. */
export const SEED = 20261124;

export async function runScenario(
  scenario: Scenario,
  design: Design,
  seed = SEED,
): Promise<RunResult> {
  const started = performance.now();
  const clock = new Clock(T0);
  const rand = random(seed);
  const dcs = dataCenters();
  const tally = new Tally();

  const roots = new Map<string, SimObject<TenantParts>>();
  const settings = new Map<string, LeaseSettings>();
  for (const t of scenario.tenants) {
    roots.set(t.id, new SimObject(clock, detachedGuard(t.limits), `root ${t.id}`));
    settings.set(t.id, {
      leaseMaxMs: LEASE_MAX_MS,
      defaults: t.limits,
      meterOptions: { partitionShare: 1, largestCost: 1 },
      usageRetentionDays: 90,
    });
  }

  // Isolates per data center grow with the load it sees at the scenario's peak.
  const peak = (t: TenantSpec) => {
    let most = 0;
    for (let ms = 0; ms <= scenario.seconds * 1000; ms += 500) most = Math.max(most, t.demand(ms));
    return most;
  };
  const share = (t: TenantSpec, dc: DataCenter) => (t.weight ? t.weight(dc) : 1) / dcs.length;
  // A client loop sends at most one request a round trip.
  const clientLoad = (dc: DataCenter) =>
    (scenario.clients ?? []).reduce(
      (sum, c) => sum + (c.dc === dc.index ? (c.count * 1000) / c.rttMs : 0),
      0,
    );
  const isolates: Isolate[][] = dcs.map((dc) => {
    const load =
      scenario.tenants.reduce((sum, t) => sum + peak(t) * share(t, dc), 0) + clientLoad(dc);
    return Array.from({ length: isolatesFor(load) }, () => ({
      dc,
      admission: new Admission(),
      io: new Map(),
      shards: new Map(),
      directUntil: new Map(),
    }));
  });

  // Regional brokers, one per tenant, region and shard (broker-shards.ts), made on first use.
  const brokers = new Map<string, Broker>();
  const rootRttOf = new Map(regions().map((r) => [r.region, r.rootRtt]));
  const brokerFor = (tenantId: string, region: Region, shard: number): Broker => {
    const name = shard === 0 ? `${tenantId}:${region}` : `${tenantId}:${region}.${shard}`;
    const broker = brokers.get(name);
    if (broker) return broker;
    const root = roots.get(tenantId)!;
    const rootRtt = rootRttOf.get(region) ?? 100;
    const made: Broker = { object: undefined!, rootRtt, rootAnswers: 0, alarm: null };
    const wakeAt = (at: number) => {
      made.alarm = at;
      clock.at(at, () => {
        if (made.alarm !== at) return;
        made.alarm = null;
        // An overloaded broker misses the wake-up; the next isolate call sets it again.
        made.object
          .call(0, (b) => b.renew())
          .then((next) => next !== null && wakeAt(next))
          .catch(() => undefined);
      });
    };
    const core = new BrokerCore(
      { name, leaseMs: BROKER_LEASE_MS },
      {
        acquire: (req) =>
          root.call(rootRtt, (g) => g.limits.acquire(req)).finally(() => made.rootAnswers++),
        now: () => clock.now(),
        wakeAt,
        onRootDecides: (req, now) => decidedAt.set(req, now),
      },
    );
    made.object = new SimObject(clock, core, `broker ${name}`);
    brokers.set(name, made);
    return made;
  };

  const ioFor = (isolate: Isolate, tenantId: string): IsolateTenant => {
    let it = isolate.io.get(tenantId);
    if (it) return it;
    const root = roots.get(tenantId)!;
    const waiters = new Set<() => void>();
    // Waiters look again once a call has settled and its continuations have run.
    const settled = () =>
      clock.after(0, () => {
        for (const wake of waiters) wake();
      });
    const viaRoot = (req: LeaseRequest) =>
      noteCall(req) ||
      root
        .call(isolate.dc.rootRtt, (g) => g.limits.acquire(req))
        .finally(() => {
          made.rootWaits++;
          settled();
        });
    const viaBroker = (req: LeaseRequest) => {
      const context = requestContext.getStore();
      // As src/limits/request.ts and the LeaseBroker do: go to the root while a broker
      // says it only passes calls on, and spread when a broker says it is hot.
      if ((isolate.directUntil.get(tenantId) ?? 0) > clock.now()) return viaRoot(req);
      const shards = isolate.shards.get(tenantId) ?? 1;
      const broker = brokerFor(
        tenantId,
        isolate.dc.region,
        shardOf(`dc${isolate.dc.index}`, shards),
      );
      return broker.object
        .call(isolate.dc.brokerRtt, async (b) => {
          const before = clock.now();
          const answer = await b.acquire(req);
          if (b.onlyPassesOn()) isolate.directUntil.set(tenantId, clock.now() + DIRECT_FOR_MS);
          const spread = spreadAdvice(b.callsPerSecond(), shards);
          if (spread !== undefined && spread > (isolate.shards.get(tenantId) ?? 1)) {
            isolate.shards.set(tenantId, spread);
          }
          // Answered from the pool at once, or only after a root call.
          const viaRootToo = clock.now() > before;
          if (viaRootToo) made.rootWaits++;
          // Counted by the root as of the call the broker made it decide, or in a pool now.
          if (context && !req.renewal) context.callNow = decidedAt.get(req) ?? clock.now();
          return answer;
        })
        .finally(settled);
    };
    const made: IsolateTenant = {
      waiters,
      rootWaits: 0,
      io: {
        acquire: design === 'flat' ? viaRoot : viaBroker,
        record: (batch, days) => root.call(isolate.dc.rootRtt, (g) => g.limits.record(batch, days)),
        waitUntil: () => undefined,
        now: () => clock.now(),
        waitFor: (done, timeoutMs) =>
          new Promise<boolean>((resolve) => {
            if (done()) return resolve(true);
            const wake = () => {
              if (!done()) return;
              waiters.delete(wake);
              timeout.cancel();
              resolve(true);
            };
            waiters.add(wake);
            const timeout = clock.after(timeoutMs, () => {
              if (waiters.delete(wake)) resolve(false);
            });
          }),
      },
    };
    it = made;
    isolate.io.set(tenantId, it);
    return it;
  };

  // What each tenant admitted, in decision order, and per token.
  const admitted = new Map<
    string,
    { at: number; delivered: number; units: number; token: string }[]
  >();
  for (const t of scenario.tenants) admitted.set(t.id, []);

  const handle = async (t: TenantSpec, isolate: Isolate, token: string) => {
    const scope: Scope = { group: 'teams', tokenId: token };
    const it = ioFor(isolate, t.id);
    const io = it.io;
    const arrived = clock.now();
    const rootWaitsBefore = it.rootWaits;
    const asked: RequestContext = { callNow: null };
    const result = await requestContext.run(asked, () =>
      isolate.admission.admit(t.id, scope, 1, settings.get(t.id)!, io),
    );
    const wait = clock.now() - arrived;
    const waitedOn: WaitedOn =
      wait === 0 ? 'none' : it.rootWaits !== rootWaitsBefore ? 'root' : 'region';
    tally.record(result.kind, wait, waitedOn, arrived - T0 >= (scenario.warmupMs ?? 0));
    if (result.kind === 'admitted') {
      // Counted as of the moment its isolate asked (the guard's `req.now`), or here and now.
      const at = asked.callNow ?? clock.now();
      admitted.get(t.id)!.push({ at, delivered: clock.now(), units: 1, token });
    }
    isolate.admission.recordUsage(
      t.id,
      {
        at: clock.now(),
        tokenId: token,
        operation: 'team.list',
        status: result.kind === 'admitted' ? 200 : 429,
        units: result.kind === 'admitted' ? 1 : 0,
        latencyMs: wait,
        refusedBy: result.kind === 'refused' ? 'per-minute' : undefined,
      },
      settings.get(t.id)!,
      io,
    );
    return result;
  };

  // Arrivals: one Poisson stream per tenant and data center, at its share of the demand.
  const end = T0 + scenario.seconds * 1000;
  for (const t of scenario.tenants) {
    for (const dc of dcs) {
      const weight = share(t, dc);
      if (weight <= 0) continue;
      const next = (from: number) => {
        const rate = t.demand(from - T0) * weight;
        // Idle now: look again a little later.
        const gap = rate > 0 ? (-Math.log(1 - rand()) / rate) * 1000 : 100;
        const at = from + gap;
        if (at >= end) return;
        clock.at(at, () => {
          if (rate > 0) {
            const here = isolates[dc.index]!;
            const isolate = here[Math.floor(rand() * here.length)]!;
            const token = t.tokens[Math.floor(rand() * t.tokens.length)]!;
            void handle(t, isolate, token);
          }
          next(at);
        });
      };
      next(T0);
    }
  }

  // Clients in a loop (retry storms): each sends, and on an answer sends again, at once on a
  // refusal or after its Retry-After, and after `thinkMs` on a success.
  for (const spec of scenario.clients ?? []) {
    const t = scenario.tenants.find((x) => x.id === spec.tenant)!;
    const here = isolates[spec.dc]!;
    for (let c = 0; c < spec.count; c++) {
      const token = t.tokens[c % t.tokens.length]!;
      const loop = async () => {
        await clock.sleep(spec.startMs + c);
        while (clock.now() + spec.rttMs < end) {
          await clock.sleep(spec.rttMs / 2);
          const isolate = here[Math.floor(rand() * here.length)]!;
          const result = await handle(t, isolate, token);
          await clock.sleep(spec.rttMs / 2);
          if (result.kind === 'admitted') await clock.sleep(spec.thinkMs);
          else if (spec.honourRetryAfter) await clock.sleep(1000 * retryAfterS(result));
        }
      };
      void loop();
    }
  }

  // Operator actions, answered once the root has them.
  const answered = new Map<string, number>();
  for (const a of scenario.actions) {
    clock.at(T0 + a.at, () => {
      const root = roots.get(a.tenant)!;
      // As the TenantGuard does: change, then push to every broker holding a lease, then answer.
      const change = root.call(OPERATOR_RTT_MS, (g) => {
        const push =
          a.kind === 'revoke'
            ? revokeAt(g, a.token ?? '', clock.now())
            : g.tenantStanding.setDisabled(true);
        return { push, holders: g.limits.leaseHolders(clock.now()) };
      });
      void change
        .then(({ push, holders }) =>
          Promise.all(
            holders.map((name) => {
              const b = brokers.get(name)!;
              return b.object.call(b.rootRtt, (core) => core.apply(push));
            }),
          ),
        )
        .then(() => answered.set(a.tenant, clock.now()))
        .catch(() => undefined);
    });
  }

  await clock.run(end + 5000);

  const tenants = scenario.tenants.map((t): TenantResult => {
    const policy = t.limits.policies[0]!;
    const events = admitted.get(t.id)!;
    const action = scenario.actions.find((a) => a.tenant === t.id);
    const answerAt = answered.get(t.id);
    let actionLagMs: number | null = null;
    if (action && answerAt !== undefined) {
      const stopped = events.filter((e) => action.kind === 'disable' || e.token === action.token);
      const last = stopped.at(-1)?.at ?? answerAt;
      actionLagMs = Math.max(0, last - answerAt);
    }
    let utilisation: number | null = null;
    if (scenario.saturated) {
      const { from, to } = scenario.saturated;
      const windowMs = policy.window_s * 1000;
      const sorted = [...events].sort((x, y) => x.at - y.at);
      // Every window ending in [from, to], sampled each 100 ms: admitted in it / the limit.
      const shares: number[] = [];
      for (let end = T0 + from; end <= T0 + to; end += 100) {
        const inWindow = sorted.filter((e) => e.at >= end - windowMs && e.at < end);
        shares.push(inWindow.reduce((sum, e) => sum + e.units, 0) / policy.limit);
      }
      utilisation = shares.reduce((x, y) => x + y, 0) / Math.max(1, shares.length);
    }
    return {
      id: t.id,
      limit: policy.limit,
      windowS: policy.window_s,
      busiest: busiestWindow(
        [...events].sort((a, b) => a.at - b.at),
        policy.window_s * 1000,
      ),
      busiestDelivered: busiestWindow(
        events.map((e) => ({ at: e.delivered, units: e.units })),
        policy.window_s * 1000,
      ),
      admitted: events.length,
      utilisation,
      actionLagMs,
    };
  });

  const objects: SimObject<unknown>[] = [
    ...roots.values(),
    ...[...brokers.values()].map((b) => b.object),
  ];
  const calls = objects.reduce((sum, o) => sum + o.calls, 0);
  const rootCalls = [...roots.values()].reduce((sum, o) => sum + o.calls, 0);
  const busiest = objects.reduce((a, b) => (b.busiestSecond() > a.busiestSecond() ? b : a));
  // Past the cold start, when every isolate makes its first call in the same second.
  const settledFrom = T0 + SETTLED_AFTER_MS;
  const busiestSettled = objects.reduce((a, b) =>
    b.busiestSecond(settledFrom) > a.busiestSecond(settledFrom) ? b : a,
  );
  return {
    scenario: scenario.name,
    design,
    tally,
    tenants,
    callsPerRequest: calls / Math.max(1, tally.requests),
    busiestObject: { name: busiest.name, callsPerSecond: busiest.busiestSecond() },
    busiestSettled: {
      name: busiestSettled.name,
      callsPerSecond: busiestSettled.busiestSecond(settledFrom),
    },
    rootCallsPerRequest: rootCalls / Math.max(1, tally.requests),
    overloaded: objects.reduce((sum, o) => sum + o.overloaded, 0),
    wallMs: performance.now() - started,
  };
}
