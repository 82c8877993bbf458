/**
 * One scenario on one design, in simulated time: every isolate runs the
 * gateway's own admission (src/limits/admission.ts) and lease
 * (src/guard/lease.ts); every tenant's root TenantGuard runs GuardCore
 * (src/guard/core.ts) on node:sqlite; calls between them go through
 * SimObject (round trips from the world table, one thread per object).
 */
import { GuardCore } from '../../src/guard/core';
import type { LeaseSettings } from '../../src/guard/lease';
import type { Scope } from '../../src/guard/policy';
import { Admission, type AdmissionIo } from '../../src/limits/admission';
import { Clock } from './clock';
import { busiestWindow, Tally, type WaitedOn } from './metrics';
import type { Scenario, TenantSpec } from './scenarios';
import { memorySql } from './sqlite';
import { SimObject } from './transport';
import { type DataCenter, dataCenters, isolatesFor, random } from './world';

/** How isolates reach a tenant's guard: the root directly, or a broker in their region. */
export type Design = 'flat' | 'regional';

/** 2026-11-24T00:00:00Z: the simulated clock starts at a UTC midnight. */
const T0 = Date.UTC(2026, 10, 24);
/** Where operator actions come from: a round trip to the root guard. */
const OPERATOR_RTT_MS = 60;
const LEASE_MAX_MS = 1000;

export interface TenantResult {
  id: string;
  limit: number;
  windowS: number;
  /** The most admitted in any window of the tenant's policy. */
  busiest: number;
  admitted: number;
  /** Admitted over the saturated span / what the limit allows in it (null: not saturated). */
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
  rootCallsPerRequest: number;
  wallMs: number;
}

interface Isolate {
  dc: DataCenter;
  admission: Admission;
  io: Map<string, AdmissionIo>;
}

export async function runScenario(scenario: Scenario, design: Design): Promise<RunResult> {
  const started = performance.now();
  const clock = new Clock(T0);
  const rand = random(20261124);
  const dcs = dataCenters();
  const tally = new Tally();

  const roots = new Map<string, SimObject<GuardCore>>();
  const settings = new Map<string, LeaseSettings>();
  for (const t of scenario.tenants) {
    const core = new GuardCore(memorySql(), () => undefined);
    core.setLimits(t.limits);
    roots.set(t.id, new SimObject(clock, core, `root ${t.id}`));
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
  const isolates: Isolate[][] = dcs.map((dc) => {
    const load = scenario.tenants.reduce((sum, t) => sum + peak(t) * share(t, dc), 0);
    return Array.from({ length: isolatesFor(load) }, () => ({
      dc,
      admission: new Admission(),
      io: new Map(),
    }));
  });

  const ioFor = (isolate: Isolate, tenantId: string): AdmissionIo => {
    let io = isolate.io.get(tenantId);
    if (!io) {
      const root = roots.get(tenantId)!;
      const rtt = isolate.dc.rootRtt;
      io = {
        acquire: (req) => root.call(rtt, (core) => core.acquire(req)),
        record: (batch, days) => root.call(rtt, (core) => core.record(batch, days)),
        waitUntil: () => undefined,
        now: () => clock.now(),
        // As waiters.ts polls, on the simulated clock.
        waitFor: async (done, timeoutMs) => {
          let waited = 0;
          let pause = 1;
          while (!done()) {
            if (waited >= timeoutMs) return false;
            await clock.sleep(pause);
            waited += pause;
            pause = Math.min(pause * 2, 10);
          }
          return true;
        },
      };
      isolate.io.set(tenantId, io);
    }
    return io;
  };

  // What each tenant admitted, in decision order, and per token.
  const admitted = new Map<string, { at: number; units: number; token: string }[]>();
  for (const t of scenario.tenants) admitted.set(t.id, []);

  const handle = async (t: TenantSpec, isolate: Isolate, token: string) => {
    const scope: Scope = { group: 'teams', tokenId: token };
    const io = ioFor(isolate, t.id);
    const arrived = clock.now();
    const result = await isolate.admission.admit(t.id, scope, 1, settings.get(t.id)!, io);
    const wait = clock.now() - arrived;
    const waitedOn: WaitedOn = wait > 0 ? 'root' : 'none';
    tally.record(result.kind, wait, waitedOn);
    if (result.kind === 'admitted') admitted.get(t.id)!.push({ at: clock.now(), units: 1, token });
    isolate.admission.recordUsage(
      t.id,
      {
        at: clock.now(),
        tokenId: token,
        route: 'team.list',
        status: result.kind === 'admitted' ? 200 : 429,
        units: result.kind === 'admitted' ? 1 : 0,
        latencyMs: wait,
        refusedBy: result.kind === 'refused' ? 'per-minute' : undefined,
      },
      settings.get(t.id)!,
      io,
    );
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

  // Operator actions, answered once the root has them.
  const answered = new Map<string, number>();
  for (const a of scenario.actions) {
    clock.at(T0 + a.at, () => {
      const root = roots.get(a.tenant)!;
      const change =
        a.kind === 'revoke'
          ? root.call(OPERATOR_RTT_MS, (core) => core.revoke(a.token ?? '', clock.now()))
          : root.call(OPERATOR_RTT_MS, (core) => core.setDisabled(true));
      void change.then(() => answered.set(a.tenant, clock.now()));
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
      const inSpan = events.filter((e) => e.at >= T0 + from && e.at < T0 + to).length;
      utilisation = inSpan / ((policy.limit * (to - from)) / (policy.window_s * 1000));
    }
    return {
      id: t.id,
      limit: policy.limit,
      windowS: policy.window_s,
      busiest: busiestWindow(events, policy.window_s * 1000),
      admitted: events.length,
      utilisation,
      actionLagMs,
    };
  });

  const objects = [...roots.values()];
  const calls = objects.reduce((sum, o) => sum + o.calls, 0);
  const busiest = objects.reduce((a, b) => (b.busiestSecond() > a.busiestSecond() ? b : a));
  return {
    scenario: scenario.name,
    design,
    tally,
    tenants,
    callsPerRequest: calls / Math.max(1, tally.requests),
    busiestObject: { name: busiest.name, callsPerSecond: busiest.busiestSecond() },
    rootCallsPerRequest: calls / Math.max(1, tally.requests),
    wallMs: performance.now() - started,
  };
}
