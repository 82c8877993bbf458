/**
 * `npm run bench`: the gateway on plain workerd (the `miniflare` package, no
 * `wrangler dev` proxy), next to a bare forwarding Worker on the same
 * runtime, in the same run. For each upstream (the emulator as is, then with
 * added latency per answer) it starts the emulator, the bare Worker and one
 * gateway per set of vars (scripts/workerd-host.ts), interleaves every
 * scenario of ./scenarios.ts round by round from a load generator on its own
 * thread (./load-thread.ts), reads per-request counts from the gateway itself
 * (GET /admin/stats) and CPU time per process from /proc (./cpu.ts), and
 * prints medians, ranges, ratios to the bare Worker and the targets. Method
 * and results: BENCHMARKS.md.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEMO_PLATFORM_KEY } from '../../emulator/seed';
import { adminClient, segments } from '../../ui/lib/admin-client';
import {
  buildGatewayBundle,
  type GatewayBundle,
  type GatewayHost,
  type LogLine,
  startBareWorker,
  startGateway,
  type WorkerHost,
} from '../workerd-host';
import { cpuMs, pidListeningOn } from './cpu';
import { FLOOR_TOKEN, startFloorWorker } from './floor';
import { median, percentile, type RoundResult } from './load';
import { LoadThread, type ThreadTarget } from './load-thread';
import {
  cpuTargets,
  EMULATOR_URL,
  refusalTargets,
  type Scenario,
  scenarios,
  targets,
  WORKERS,
  type WorkerId,
} from './scenarios';
import { COUNTERS, type Counter, type Counts, IsolateStats, zeroCounts } from './stats';
import { checkUsageExport, type ExportCheck } from './usage-sink';
import { codeVersion, fmt, ratio, round3 } from './util';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface WorkerdBenchConfig {
  rounds: number;
  requestsPerRound: number;
  warmupRequests: number;
  concurrency: number;
  /** One upstream run per value: the emulator delays each platform answer by this many ms. */
  latenciesMs: number[];
  /** How requests reach each Worker: a workerd socket straight to it, or Miniflare's entry Worker. */
  via: 'direct' | 'entry';
  roundCapMs: number;
  requestTimeoutMs: number;
  /** A scenario with more failed requests than this share makes the bench exit non-zero. */
  maxErrorRate: number;
  /** Run only these scenarios (and the baselines `bare` and `floor`); default: all. */
  only?: string[];
}

export const DEFAULT_CONFIG: WorkerdBenchConfig = {
  rounds: 7,
  requestsPerRound: 1000,
  warmupRequests: 300,
  concurrency: 16,
  latenciesMs: [0, 20],
  via: 'direct',
  roundCapMs: 30_000,
  requestTimeoutMs: 10_000,
  maxErrorRate: 0.01,
};

interface ScenarioSummary {
  scenario: string;
  worker: WorkerId;
  rps: number;
  rpsMin: number;
  rpsMax: number;
  p50: number;
  p99: number;
  requests: number;
  errors: number;
  errorSamples: string[];
  xCache: string;
  /** Per request sent, from the gateway's own counters; null when not available. */
  perRequest: Counts | null;
  /** Why perRequest is null (bare Worker, endpoint missing, isolate restarted…). */
  perRequestNote?: string;
  /** CPU µs per request sent, medians over rounds (/proc; null elsewhere than Linux). */
  cpuUs: CpuPerRequest;
  /** The Worker's CPU µs per request of each round, and of each cycle (round start to next start). */
  workerCpuRounds: (number | null)[];
  /** Null where the Worker serves other scenarios too (or no /proc). */
  workerCpuCycles: number[] | null;
  /** Refusals the scenario expects (a flood): how many, their latency, and what they cost. */
  refusals: RefusalSummary | null;
}

interface RefusalSummary {
  refused: number;
  p50: number;
  p99: number;
  /** Per refused request, from the gateway's counters; null when not available. */
  guardCallsPerRefused: number | null;
  askedPerRefused: number | null;
}

/** Where a request's CPU went: the Worker's workerd, the emulator, this process (client and log reader). */
interface CpuPerRequest {
  worker: number | null;
  emulator: number | null;
  bench: number | null;
}
type CpuSample = [worker: number | null, emulator: number | null, bench: number | null];

interface TargetResult {
  label: string;
  pass: boolean;
  value?: number;
  detail?: string;
}

/** Worker CPU of a twin scenario against its original: the median ratio, and each round's. */
interface AaPair {
  twin: string;
  of: string;
  /** Ratio of the two medians over rounds. */
  ratio: number | null;
  /** Each round's ratio (twin / original), in round order. */
  perRound: number[];
}

interface UpstreamRun {
  latencyMs: number;
  scenarios: ScenarioSummary[];
  targets: TargetResult[];
  /** Per gateway: the bench tenant's `guard_calls` from GET /admin/tenants/{id}/usage, or null. */
  guardUsage: Partial<Record<WorkerId, unknown>>;
  /** Each A/A pair: the same build measured twice in the same run. */
  aa: AaPair[];
  /** workerd warnings and errors, per Worker (at most 5 each). */
  warnings: Partial<Record<WorkerId, string[]>>;
  /** Per gateway with the usage export on: what it produced, and what reached the sink. */
  usageExport: Partial<Record<WorkerId, ExportCheck | string>>;
  seconds: number;
}

const NAME_WIDTH = Math.max(...scenarios.map((s) => s.name.length));
const WORKER_WIDTH = Math.max(...Object.values(WORKERS).map((w) => w.label.length));

/** Everything started, so Ctrl-C (or a failure) stops it all. */
const running = new Set<() => Promise<void>>();
async function stopAll(): Promise<void> {
  const stops = [...running];
  running.clear();
  await Promise.allSettled(stops.map((stop) => stop()));
}

/** Runs the bench, prints the report; resolves to the exit code. */
export async function runWorkerdBench(
  config: WorkerdBenchConfig = DEFAULT_CONFIG,
): Promise<number> {
  for (const [signal, exitCode] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)
    process.once(signal, () => {
      console.error(`\n${signal}: stopping workerd and the emulator`);
      void stopAll().finally(() => process.exit(exitCode));
    });

  selectedScenarios(config); // an unknown --only name fails here, before anything is built
  const began = performance.now();
  // Built once, before the first request: an edit of src/ during the run changes nothing measured.
  const code = codeVersion();
  console.log(`== building the gateway: wrangler deploy --dry-run (code ${code})`);
  const bundle = await buildGatewayBundle();
  running.add(async () => bundle.remove());
  const bundleHash = createHash('sha256')
    .update(readFileSync(bundle.main))
    .digest('hex')
    .slice(0, 12);

  const runs: UpstreamRun[] = [];
  try {
    for (const latencyMs of config.latenciesMs)
      runs.push(await runUpstream(config, bundle, latencyMs));
  } finally {
    await stopAll();
  }
  const totalSeconds = (performance.now() - began) / 1000;

  const runtime = versions();
  console.log(
    `\n${config.rounds} interleaved rounds of ${config.requestsPerRound} requests per scenario, ` +
      `concurrency ${config.concurrency}, keep-alive, ${config.via === 'direct' ? 'direct workerd sockets' : "through Miniflare's entry Worker"}; medians (req/s min–max over rounds)`,
  );
  console.log(
    `${os.cpus().length} CPUs, Node ${process.version}, workerd ${runtime.workerd} via miniflare ${runtime.miniflare}, ` +
      `bundle by wrangler ${runtime.wrangler} (sha256 ${bundleHash}); code ${code}`,
  );
  for (const run of runs) printRun(run);
  console.log(`\nbench took ${totalSeconds.toFixed(1)} s in total`);
  console.log(
    `BENCH_RESULT ${JSON.stringify({
      date: new Date().toISOString(),
      mode: 'workerd',
      code,
      bundleSha256: bundleHash,
      runtime: { ...runtime, node: process.version, cpus: os.cpus().length },
      config,
      totalSeconds: round3(totalSeconds),
      runs: runs.map(runJson),
    })}`,
  );

  const failing = runs.flatMap((run) =>
    run.scenarios
      .filter((s) => s.errors > config.maxErrorRate * s.requests)
      .map((s) => `${s.scenario} (+${run.latencyMs} ms)`),
  );
  if (failing.length > 0) {
    console.error(
      `FAILED: more than ${config.maxErrorRate * 100}% failed requests in ${failing.join(', ')}`,
    );
    return 1;
  }
  return 0;
}

interface Run {
  scenario: Scenario;
  target: ThreadTarget;
  rounds: RoundResult[];
  /** Per round: CPU µs per request of the Worker's process, the emulator, this process. */
  cpu: CpuSample[];
  /** The Worker's process CPU ms at the start of each round, then at the end of the last. */
  cycleMarks: (number | null)[];
  /** Whether another scenario of the run uses the same Worker (no cycle figure then). */
  sharesWorker: boolean;
  /** The workerd process serving this scenario's Worker. */
  workerPid: number | null;
  xCache: string;
  counts: Counts;
  countsNote?: string;
}

export interface Gateway {
  host: GatewayHost;
  tenantId: string;
  token: string;
  /** The isolate's counters, from GET /admin/stats. */
  stats: IsolateStats;
}

async function runUpstream(
  config: WorkerdBenchConfig,
  bundle: GatewayBundle,
  latencyMs: number,
): Promise<UpstreamRun> {
  const began = performance.now();
  console.log(`\n== upstream: the emulator, +${latencyMs} ms per answer`);
  const emulator = await startEmulatorProcess(latencyMs);
  const stopEmulator = emulator.stop;
  running.add(stopEmulator);

  const hosts = new Map<WorkerId, WorkerHost>();
  const gatewayHosts = new Map<WorkerId, GatewayHost>();
  const gateways = new Map<WorkerId, Gateway>();
  const stops: (() => Promise<void>)[] = [stopEmulator];
  try {
    const selected = selectedScenarios(config);
    const used = [...new Set(selected.map((s) => s.worker))];
    await Promise.all(
      used.map(async (id) => {
        const spec = WORKERS[id];
        const onLog = process.env.BENCH_VERBOSE
          ? (l: LogLine) => console.log(`[${id} ${l.level}] ${l.message}`)
          : undefined;
        const host =
          spec.kind === 'bare'
            ? await startBareWorker({
                upstreamUrl: emulator.url,
                platformKey: DEMO_PLATFORM_KEY,
                via: config.via,
                onLog,
              })
            : spec.kind === 'floor'
              ? await startFloorWorker({
                  upstreamUrl: emulator.url,
                  platformKey: DEMO_PLATFORM_KEY,
                  via: config.via,
                  ...(onLog ? { onLog } : {}),
                })
              : await startGateway({
                  platformBaseUrl: emulator.url,
                  vars: withEmulatorUrl(spec.vars, emulator.url),
                  bundle,
                  via: config.via,
                  onLog,
                  // The gateway's own costs: Miniflare's asset router hops are not Cloudflare's.
                  staticAssets: false,
                });
        running.add(host.stop);
        stops.push(host.stop);
        hosts.set(id, host);
        if (spec.kind === 'gateway') gatewayHosts.set(id, host as GatewayHost);
      }),
    );
    for (const id of used)
      console.log(`${WORKERS[id].label.padEnd(WORKER_WIDTH)}  ${hosts.get(id)!.url}`);
    for (const id of used) {
      const host = gatewayHosts.get(id);
      if (host) gateways.set(id, await setUpGateway(host));
    }

    const runs: Run[] = selected.map((scenario) => {
      const gw = gateways.get(scenario.worker);
      const token = gw?.token ?? (scenario.worker === 'floor' ? FLOOR_TOKEN : '');
      const { path: p, headers, body } = scenario.request(token);
      return {
        scenario,
        target: {
          key: scenario.name,
          url: new URL(p, hosts.get(scenario.worker)!.url).href,
          headers,
          ...(body !== undefined ? { body } : {}),
          expect: scenario.expect ?? { status: 200, code: 0 },
          ...(scenario.refused ? { refused: scenario.refused } : {}),
          ...(scenario.perSecond ? { perSecond: scenario.perSecond } : {}),
        },
        rounds: [],
        cpu: [],
        cycleMarks: [],
        sharesWorker: selected.filter((s) => s.worker === scenario.worker).length > 1,
        workerPid: pidListeningOn(Number(new URL(hosts.get(scenario.worker)!.url).port)),
        xCache: '',
        counts: zeroCounts(),
        ...(gw ? {} : { countsNote: 'not a gateway' }),
      };
    });
    const load = new LoadThread();
    const round = (target: ThreadTarget, requests: number) =>
      load.round(target, {
        requests,
        concurrency: config.concurrency,
        capMs: config.roundCapMs,
        requestTimeoutMs: config.requestTimeoutMs,
      });

    try {
      // Warm-up, not counted: opens the keep-alive connections, warms the JITs, the tenant memo, the cache.
      for (const run of runs) await round(run.target, config.warmupRequests);
      // What the gateway did with the request (HIT, BYPASS, …), checked once, for the report.
      for (const run of runs) {
        const { body } = run.target;
        const res = await fetch(run.target.url, {
          method: body === undefined ? 'GET' : 'POST',
          headers: run.target.headers,
          body,
        });
        // An MCP result says it in its _meta.
        const text = await res.text();
        run.xCache = res.headers.get('x-cache') ?? /"apgw\/cache":"(\w+)"/.exec(text)?.[1] ?? '–';
      }
      for (const gw of gateways.values()) await gw.stats.start();

      for (let r = 0; r < config.rounds; r++) {
        // Alternate the order so no scenario always runs first (or right after the same one).
        const order = r % 2 === 0 ? runs : [...runs].reverse();
        for (const run of order) {
          const pids = [run.workerPid, emulator.pid, process.pid];
          const cpuBefore = pids.map(cpuMs);
          run.cycleMarks.push(cpuBefore[0] ?? null);
          const result = await round(run.target, config.requestsPerRound);
          const cpuAfter = pids.map(cpuMs);
          run.rounds.push(result);
          run.cpu.push(perRequestUs(cpuBefore, cpuAfter, result.sent));
          const gw = gateways.get(run.scenario.worker);
          if (gw) await attributeCounts(gw, run);
          console.log(
            `+${latencyMs} ms  round ${r + 1}/${config.rounds}  ${run.scenario.name.padEnd(NAME_WIDTH)} ` +
              `${fmt(rps(result), 0).padStart(6)} req/s  p50 ${fmt(percentile(result.latenciesMs, 50), 2)} ms  ` +
              `p99 ${fmt(percentile(result.latenciesMs, 99), 2)} ms${result.errors ? `  ${result.errors} errors` : ''}`,
          );
        }
      }
      for (const run of runs) run.cycleMarks.push(cpuMs(run.workerPid));
    } finally {
      await load.close();
    }

    const guardUsage: Partial<Record<WorkerId, unknown>> = {};
    for (const [id, gw] of gateways) guardUsage[id] = await readGuardUsage(gw);
    const usageExport: Partial<Record<WorkerId, ExportCheck | string>> = {};
    for (const [id, gw] of gateways) {
      const vars = withEmulatorUrl(
        (WORKERS[id] as { vars: Record<string, string> }).vars,
        emulator.url,
      );
      if (vars.USAGE_EXPORT !== 'events' || !vars.USAGE_SINK_URL) continue;
      usageExport[id] = await checkUsageExport(
        gw.host.url,
        gw.host.adminToken,
        vars.USAGE_SINK_URL,
      );
    }
    const warnings: Partial<Record<WorkerId, string[]>> = {};
    for (const id of used) warnings[id] = workerdWarnings(hosts.get(id)!.logs());

    const summaries = runs.map((run) => summarize(run, config, gateways.get(run.scenario.worker)));
    return {
      latencyMs,
      scenarios: summaries,
      targets: [...evaluateTargets(summaries, warnings), ...exportTargets(usageExport)],
      aa: aaPairs(runs, summaries),
      guardUsage,
      warnings,
      usageExport,
      seconds: (performance.now() - began) / 1000,
    };
  } finally {
    for (const stop of stops) running.delete(stop);
    await Promise.allSettled(stops.map((stop) => stop()));
  }
}

/** Each twin scenario's Worker CPU against its original's, by medians and round by round. */
function aaPairs(runs: Run[], summaries: ScenarioSummary[]): AaPair[] {
  const pairs: AaPair[] = [];
  for (const twin of runs) {
    const of = twin.scenario.twinOf;
    const original = runs.find((r) => r.scenario.name === of);
    if (!of || !original) continue;
    const a = summaries.find((s) => s.scenario === of)?.cpuUs.worker ?? null;
    const b = summaries.find((s) => s.scenario === twin.scenario.name)?.cpuUs.worker ?? null;
    const perRound = twin.cpu.flatMap(([us], i) => {
      const base = original.cpu[i]?.[0];
      return us === null || base === null || base === undefined || base === 0 ? [] : [us / base];
    });
    pairs.push({
      twin: twin.scenario.name,
      of,
      ratio: a === null || b === null || a === 0 ? null : b / a,
      perRound,
    });
  }
  return pairs;
}

/** The operator API of a gateway the bench runs. */
const adminOf = (url: string, adminToken: string) =>
  adminClient(url, { headers: { authorization: `Bearer ${adminToken}` } });

/** Creates the bench tenant. */
export async function setUpGateway(host: GatewayHost): Promise<Gateway> {
  const res = await adminOf(host.url, host.adminToken).tenants.$post({
    json: { name: 'bench', platform_key: DEMO_PLATFORM_KEY },
  });
  const body = await res.json();
  if (res.status !== 201) throw new Error(`creating tenant failed: HTTP ${res.status} ${body.msg}`);
  return {
    host,
    tenantId: body.data.tenant_id,
    token: body.data.token,
    stats: new IsolateStats(host.url, host.adminToken),
  };
}

/** Adds the gateway's counters' change during the run's last round to the run. */
async function attributeCounts(gw: Gateway, run: Run): Promise<void> {
  const delta = await gw.stats.delta();
  if (typeof delta === 'string') run.countsNote ??= delta;
  else if (!run.countsNote) for (const name of COUNTERS) run.counts[name] += delta[name];
}

/** The tenant's `guard_calls` counters from its usage, if the gateway reports them. */
async function readGuardUsage(gw: Gateway): Promise<unknown> {
  try {
    const res = await adminOf(gw.host.url, gw.host.adminToken).tenants[':id'].usage.$get({
      param: segments({ id: gw.tenantId }),
    });
    // Read as unknown: the gateway measured may be an older one (bench:profile --base).
    const body = (await res.json()) as { code?: number; data?: { guard_calls?: unknown } };
    const calls = body.data?.guard_calls;
    return body.code === 0 && calls !== null && typeof calls === 'object' ? calls : null;
  } catch {
    return null;
  }
}

/** Lines workerd printed at warn/error level, or that look like trouble, e.g. "different request context". */
function workerdWarnings(lines: LogLine[]): string[] {
  return lines
    .filter(
      (l) =>
        /warn|error/i.test(l.level) ||
        /different request context|uncaught|unhandled/i.test(l.message),
    )
    .map((l) => `${l.level}: ${l.message.slice(0, 200)}`)
    .slice(0, 5);
}

/** CPU µs per request from two readings of each process, null where a reading is missing. */
function perRequestUs(
  before: (number | null)[],
  after: (number | null)[],
  sent: number,
): CpuSample {
  const us = (i: number): number | null => {
    const a = before[i];
    const b = after[i];
    return a === null || a === undefined || b === null || b === undefined || sent === 0
      ? null
      : ((b - a) * 1000) / sent;
  };
  return [us(0), us(1), us(2)];
}

/** The Worker's CPU µs per request from each round's start to the next's (or the end). */
function cycleCpu(run: Run): number[] | null {
  if (run.sharesWorker) return null;
  const marks = run.cycleMarks;
  const cycles = run.rounds.map((r, i) => {
    const a = marks[i];
    const b = marks[i + 1];
    return a === null || a === undefined || b === null || b === undefined || r.sent === 0
      ? null
      : ((b - a) * 1000) / r.sent;
  });
  return cycles.every((c) => c !== null) && cycles.length > 0 ? (cycles as number[]) : null;
}

/** `{emulator}` in a gateway's vars is the emulator's URL (the usage sink's host). */
function withEmulatorUrl(vars: Record<string, string>, url: string): Record<string, string> {
  return Object.fromEntries(
    Object.entries(vars).map(([k, v]) => [k, v.replaceAll(EMULATOR_URL, url)]),
  );
}

function medianCpu(samples: CpuSample[], i: 0 | 1 | 2): number | null {
  const values = samples.map((s) => s[i]).filter((v): v is number => v !== null);
  return values.length === samples.length && values.length > 0 ? median(values) : null;
}

/** Successful (or expectedly refused) requests per second of wall time. */
function rps(r: RoundResult): number {
  return ((r.ok + r.refused) / r.wallMs) * 1000;
}

function summarize(run: Run, config: WorkerdBenchConfig, gw: Gateway | undefined): ScenarioSummary {
  const perRound = run.rounds.map(rps);
  const sent = run.rounds.reduce((n, r) => n + r.sent, 0);
  const note = run.countsNote ?? (gw ? undefined : 'not a gateway');
  const perRequest =
    note === undefined && sent > 0
      ? (Object.fromEntries(COUNTERS.map((c) => [c, run.counts[c] / sent])) as Counts)
      : null;
  const refused = run.rounds.reduce((n, r) => n + r.refused, 0);
  const perRefused = (c: Counter) =>
    note === undefined && refused > 0 ? run.counts[c] / refused : null;
  const refusals: RefusalSummary | null = run.scenario.refused
    ? {
        refused,
        p50: median(run.rounds.map((r) => percentile(r.refusedLatenciesMs, 50))),
        p99: median(run.rounds.map((r) => percentile(r.refusedLatenciesMs, 99))),
        guardCallsPerRefused: perRefused('guard_calls'),
        askedPerRefused: perRefused('limit_refusals_asked'),
      }
    : null;
  return {
    refusals,
    scenario: run.scenario.name,
    worker: run.scenario.worker,
    rps: median(perRound),
    rpsMin: Math.min(...perRound),
    rpsMax: Math.max(...perRound),
    p50: median(run.rounds.map((r) => percentile(r.latenciesMs, 50))),
    p99: median(run.rounds.map((r) => percentile(r.latenciesMs, 99))),
    requests: run.rounds.length * config.requestsPerRound,
    errors: run.rounds.reduce((n, r) => n + r.errors, 0),
    errorSamples: [...new Set(run.rounds.flatMap((r) => r.errorSamples))].slice(0, 5),
    xCache: run.xCache,
    perRequest,
    ...(note ? { perRequestNote: note } : {}),
    cpuUs: {
      worker: medianCpu(run.cpu, 0),
      emulator: medianCpu(run.cpu, 1),
      bench: medianCpu(run.cpu, 2),
    },
    workerCpuRounds: run.cpu.map((c) => c[0]),
    workerCpuCycles: cycleCpu(run),
  };
}

/** The scenarios `--only` names, with the bare Worker always first; unknown names are an error. */
function selectedScenarios(config: WorkerdBenchConfig): Scenario[] {
  if (!config.only) return scenarios;
  const unknown = config.only.filter((name) => !scenarios.some((s) => s.name === name));
  if (unknown.length > 0) {
    throw new Error(
      `unknown scenario ${unknown.join(', ')}; known: ${scenarios.map((s) => s.name).join(', ')}`,
    );
  }
  return scenarios.filter(
    (s) => s.worker === 'bare' || s.worker === 'floor' || config.only?.includes(s.name),
  );
}

function evaluateTargets(
  all: ScenarioSummary[],
  warnings: Partial<Record<WorkerId, string[]>>,
): TargetResult[] {
  const byName = new Map(all.map((s) => [s.scenario, s]));
  // A target whose scenarios did not run (--only) is left out.
  const measured = targets.filter((t) => byName.has(t.scenario) && byName.has(t.vs));
  const results: TargetResult[] = measured.map((t) => {
    const a = byName.get(t.scenario);
    const b = byName.get(t.vs);
    const value = a && b ? a.rps / b.rps : NaN;
    return { label: t.label, pass: value >= t.min, value };
  });
  for (const t of cpuTargets) {
    const a = byName.get(t.scenario);
    const b = byName.get(t.vs);
    if (a === undefined || b === undefined) continue;
    results.push(cpuTarget(t, a, b));
  }
  for (const t of refusalTargets) {
    const value = byName.get(t.scenario)?.refusals?.[
      t.count === 'guard_calls' ? 'guardCallsPerRefused' : 'askedPerRefused'
    ];
    if (value === undefined) continue;
    results.push(
      value === null
        ? { label: t.label, pass: false, detail: 'no counts' }
        : { label: t.label, pass: value <= t.max, value },
    );
  }
  const withErrors = all.filter((s) => s.errors > 0);
  results.push({
    label: '0 unexpected answers in every scenario (non-2xx; 404/40400 for gateway-404)',
    pass: withErrors.length === 0,
    ...(withErrors.length
      ? { detail: withErrors.map((s) => `${s.scenario} ${s.errors}`).join(', ') }
      : {}),
  });
  const warned = Object.entries(warnings).filter(([, lines]) => lines && lines.length > 0);
  results.push({
    label: 'workerd printed no warning or error',
    pass: warned.length === 0,
    ...(warned.length ? { detail: warned.map(([id]) => id).join(', ') } : {}),
  });
  return results;
}

/**
 * A CPU ratio: the ratio of the medians, with the range of the per-round ratios (round i
 * of one next to round i of the other: they ran close together) as its spread.
 */
function cpuTarget(t: (typeof cpuTargets)[number], a: ScenarioSummary, b: ScenarioSummary) {
  const cycle = t.measure === 'cycle';
  const samples = (s: ScenarioSummary) => (cycle ? s.workerCpuCycles : s.workerCpuRounds);
  const [as, bs] = [samples(a), samples(b)];
  if (!as || !bs || [...as, ...bs].some((v) => v === null)) {
    const why = cycle
      ? 'no cycle figure: a Worker serves other scenarios too (use --only), or no /proc'
      : 'no CPU readings (needs Linux /proc)';
    return { label: t.label, pass: false, detail: why };
  }
  const [av, bv] = [as as number[], bs as number[]];
  const value = median(av) / median(bv);
  const perRound = av.map((v, i) => v / bv[i]!);
  return {
    label: t.label,
    pass: value <= t.max,
    value,
    detail:
      `${fmt(median(av), 0)} / ${fmt(median(bv), 0)} µs; per-round ratios ` +
      `${ratio(Math.min(...perRound))}–${ratio(Math.max(...perRound))}`,
  };
}

/** Every event a gateway with the export on produced reached the sink, none lost. */
function exportTargets(checks: Partial<Record<WorkerId, ExportCheck | string>>): TargetResult[] {
  return Object.entries(checks).map(([id, c]) => {
    const label = `usage export (${WORKERS[id as WorkerId].label}): every event produced at the sink, none lost`;
    if (typeof c === 'string' || c === undefined) return { label, pass: false, detail: c ?? 'n/a' };
    return {
      label,
      pass: c.lost === 0 && c.atSink === c.produced,
      detail: `${c.produced} produced, ${c.lost} lost, ${c.atSink} at the sink, ${c.repeats} repeated ids`,
    };
  });
}

function printRun(run: UpstreamRun): void {
  const bare = run.scenarios.find((s) => s.worker === 'bare');
  const floor = run.scenarios.find((s) => s.worker === 'floor');
  console.log(
    `\n== upstream: the emulator, +${run.latencyMs} ms per answer (${run.seconds.toFixed(1)} s)`,
  );
  console.log(
    `${'scenario'.padEnd(NAME_WIDTH)}  ${'worker'.padEnd(WORKER_WIDTH)}  ${'req/s'.padStart(6)} ${'(min–max)'.padStart(11)}  ` +
      `${'× bare'.padStart(6)}  ${'× floor'.padStart(7)}  ${'p50 ms'.padStart(6)}  ${'p99 ms'.padStart(6)}  x-cache  ${'errors'.padStart(9)}  ` +
      `KV/req  cache/req  guard/req`,
  );
  for (const s of run.scenarios) {
    const range = `${fmt(s.rpsMin, 0)}–${fmt(s.rpsMax, 0)}`;
    const per = (c: Counter) =>
      s.perRequest ? fmt(s.perRequest[c], 2) : s.worker === 'bare' ? '–' : 'n/a';
    console.log(
      `${s.scenario.padEnd(NAME_WIDTH)}  ${WORKERS[s.worker].label.padEnd(WORKER_WIDTH)}  ${fmt(s.rps, 0).padStart(6)} ${range.padStart(11)}  ` +
        `${(bare ? ratio(s.rps / bare.rps) : '–').padStart(6)}  ${(floor ? ratio(s.rps / floor.rps) : '–').padStart(7)}  ${fmt(s.p50, 2).padStart(6)}  ${fmt(s.p99, 2).padStart(6)}  ` +
        `${s.xCache.padEnd(7)}  ${`${s.errors}/${s.requests}`.padStart(9)}  ${per('kv_reads').padStart(6)}  ` +
        `${per('cache_api_calls').padStart(9)}  ${per('guard_calls').padStart(9)}`,
    );
    for (const e of s.errorSamples) console.log(`    error: ${e}`);
  }
  printCpu(run.scenarios);
  printAa(run.aa);
  printRefusals(run.scenarios, bare);
  const notes = [
    ...new Set(
      run.scenarios
        .filter((s) => s.worker !== 'bare' && s.perRequestNote)
        .map((s) => s.perRequestNote!),
    ),
  ];
  if (notes.length > 0) console.log(`per-request counts n/a: ${notes.join('; ')}`);
  // Only while every Worker is saturated: with added latency the forwarding ones mostly wait.
  if (bare && run.latencyMs === 0)
    console.log(
      `derived, 1000 / req/s (machine time per request at this load): ${run.scenarios
        .map((s) => {
          const ms = 1000 / s.rps;
          const diff = ms - 1000 / bare.rps;
          return `${s.scenario} ${fmt(ms, 3)} ms${s === bare ? '' : ` (${diff >= 0 ? '+' : ''}${fmt(diff, 3)})`}`;
        })
        .join(', ')}`,
    );
  for (const [id, usage] of Object.entries(run.guardUsage))
    console.log(
      `TenantGuard calls of the bench tenant (usage.guard_calls), ${WORKERS[id as WorkerId].label}: ` +
        (usage ? JSON.stringify(usage) : 'n/a'),
    );
  for (const [id, lines] of Object.entries(run.warnings))
    for (const line of lines ?? []) console.log(`workerd (${id}) ${line}`);
  console.log('targets (informational):');
  for (const t of run.targets)
    console.log(
      `  ${t.pass ? 'PASS' : 'FAIL'}  ${t.label}` +
        (t.value !== undefined ? `: ${ratio(t.value)} ×` : '') +
        (t.detail ? ` (${t.detail})` : ''),
    );
}

/** How far two measurements of the same build differ: the spread any A/B figure must beat. */
function printAa(pairs: AaPair[]): void {
  for (const p of pairs) {
    if (p.perRound.length === 0) continue;
    const sorted = [...p.perRound].sort((a, b) => a - b);
    console.log(
      `A/A, Worker CPU ${p.twin} / ${p.of} (same build, another workerd process, interleaved): ` +
        `medians ${p.ratio === null ? '–' : ratio(p.ratio)}, per round median ${ratio(median(sorted))} ` +
        `(${ratio(sorted[0]!)}–${ratio(sorted.at(-1)!)})`,
    );
  }
}

/** What a flood's refusals cost, and how long they took next to the bare Worker's forward. */
function printRefusals(all: ScenarioSummary[], bare: ScenarioSummary | undefined): void {
  for (const s of all) {
    const r = s.refusals;
    if (!r) continue;
    const admitted = s.requests - r.refused - s.errors;
    const per = (v: number | null) => (v === null ? 'n/a' : fmt(v, 3));
    console.log(
      `${s.scenario}: ${admitted} admitted and ${r.refused} refused of ${s.requests}; ` +
        `refused p50 ${fmt(r.p50, 2)} ms, p99 ${fmt(r.p99, 2)} ms` +
        (bare ? ` (bare Worker p50 ${fmt(bare.p50, 2)} ms, p99 ${fmt(bare.p99, 2)} ms)` : '') +
        `; guard calls per refused request ${per(r.guardCallsPerRefused)}, ` +
        `refusals a guard call answered ${per(r.askedPerRefused)}`,
    );
  }
}

/** CPU per request by process, next to the bare Worker's. */
function printCpu(all: ScenarioSummary[]): void {
  if (all.every((s) => s.cpuUs.worker === null)) {
    console.log('CPU per request: n/a (needs Linux /proc)');
    return;
  }
  const us = (v: number | null) => (v === null ? '–' : fmt(v, 0)).padStart(8);
  const workerOf = (kind: WorkerId) => all.find((s) => s.worker === kind)?.cpuUs.worker ?? null;
  const bare = workerOf('bare');
  const floor = workerOf('floor');
  const times = (v: number | null, base: number | null) =>
    (v === null || base === null || base === 0 ? '–' : ratio(v / base)).padStart(7);
  console.log(
    'CPU µs per request (medians over rounds, from /proc; 10 ms ticks, so ±10 µs at 1000 requests a round):',
  );
  console.log(
    `${'scenario'.padEnd(NAME_WIDTH)}  ${'Worker'.padStart(8)}  ${'× bare'.padStart(7)}  ${'× floor'.padStart(7)}  ` +
      `${'emulator'.padStart(8)}  ${'bench'.padStart(8)}  ${'total'.padStart(8)}  ${'Worker ↻'.padStart(8)}` +
      "   (Worker × the bare Worker's and the checking floor's; bench = load generator + Miniflare reading workerd log lines; Worker ↻ = round start to next round start, for a Worker serving one scenario)",
  );
  for (const s of all) {
    const { worker, emulator, bench } = s.cpuUs;
    const total =
      worker === null || emulator === null || bench === null ? null : worker + emulator + bench;
    const cycle = s.workerCpuCycles ? median(s.workerCpuCycles) : null;
    console.log(
      `${s.scenario.padEnd(NAME_WIDTH)}  ${us(worker)}  ${times(worker, bare)}  ${times(worker, floor)}  ` +
        `${us(emulator)}  ${us(bench)}  ${us(total)}  ${us(cycle)}`,
    );
  }
}

function runJson(run: UpstreamRun) {
  const bare = run.scenarios.find((s) => s.worker === 'bare');
  const floor = run.scenarios.find((s) => s.worker === 'floor');
  return {
    upstreamLatencyMs: run.latencyMs,
    seconds: round3(run.seconds),
    scenarios: run.scenarios.map((s) => ({
      scenario: s.scenario,
      worker: s.worker,
      rps: round3(s.rps),
      rpsMin: round3(s.rpsMin),
      rpsMax: round3(s.rpsMax),
      p50Ms: round3(s.p50),
      p99Ms: round3(s.p99),
      requests: s.requests,
      errors: s.errors,
      xCache: s.xCache,
      vsBare: bare ? round3(s.rps / bare.rps) : null,
      vsFloor: floor ? round3(s.rps / floor.rps) : null,
      derivedMsPerRequest: round3(1000 / s.rps),
      perRequest: s.perRequest
        ? Object.fromEntries(Object.entries(s.perRequest).map(([k, v]) => [k, round3(v)]))
        : null,
      ...(s.perRequestNote ? { perRequestNote: s.perRequestNote } : {}),
      ...(s.refusals
        ? {
            refused: s.refusals.refused,
            refusedP50Ms: round3(s.refusals.p50),
            refusedP99Ms: round3(s.refusals.p99),
            guardCallsPerRefused:
              s.refusals.guardCallsPerRefused === null
                ? null
                : round3(s.refusals.guardCallsPerRefused),
            askedPerRefused:
              s.refusals.askedPerRefused === null ? null : round3(s.refusals.askedPerRefused),
          }
        : {}),
      cpuUsPerRequest: {
        worker: s.cpuUs.worker === null ? null : round3(s.cpuUs.worker),
        emulator: s.cpuUs.emulator === null ? null : round3(s.cpuUs.emulator),
        bench: s.cpuUs.bench === null ? null : round3(s.cpuUs.bench),
      },
      workerCpuUsPerRound: s.workerCpuRounds.map((v) => (v === null ? null : round3(v))),
      workerCpuUsPerCycle: s.workerCpuCycles?.map(round3) ?? null,
    })),
    targets: run.targets.map((t) => ({
      ...t,
      ...(t.value !== undefined ? { value: round3(t.value) } : {}),
    })),
    aa: run.aa.map((p) => ({
      ...p,
      ratio: p.ratio === null ? null : round3(p.ratio),
      perRound: p.perRound.map(round3),
    })),
    guardUsage: run.guardUsage,
    usageExport: run.usageExport,
    workerdWarnings: run.warnings,
  };
}

function versions() {
  const version = (pkg: string) => {
    try {
      return (
        JSON.parse(readFileSync(path.join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as {
          version: string;
        }
      ).version;
    } catch {
      return 'unknown';
    }
  };
  return {
    workerd: version('workerd'),
    miniflare: version('miniflare'),
    wrangler: version('wrangler'),
  };
}

/**
 * The emulator in its own process (as the platform would be), on a free port,
 * with `latencyMs` added to every platform answer.
 */
export async function startEmulatorProcess(
  latencyMs: number,
): Promise<{ url: string; pid: number | null; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'emulator/server.ts'], {
    cwd: ROOT,
    env: { ...process.env, EMULATOR_PORT: '0', EMULATOR_LATENCY_MS: String(latencyMs) },
    stdio: ['ignore', 'pipe', process.env.BENCH_VERBOSE ? 'inherit' : 'ignore'],
    detached: true,
  });
  const stop = () => terminate(child);
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(
        () => reject(new Error('the emulator did not start within 30 s')),
        30_000,
      );
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the emulator exited with code ${code}`));
      });
    });
    // Keep reading its output so the pipe never fills up.
    child.stdout!.resume();
    return { url, pid: child.pid ?? null, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The child runs in its own process group, so tsx's own children stop too. */
function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || !child.pid) return Promise.resolve();
  const group = -child.pid;
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(group, sig);
    } catch {
      // Already gone.
    }
  };
  return new Promise((resolve) => {
    const timer = setTimeout(() => signal('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    signal('SIGTERM');
  });
}
