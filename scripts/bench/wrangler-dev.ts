/**
 * `npm run bench -- --wrangler-dev`: the earlier bench, kept for comparison.
 * Load-tests the scenarios in ./wrangler-dev-scenarios.ts against local
 * stacks (platform emulator + gateway under `wrangler dev`), one stack per
 * distinct set of Worker vars, all started up front, and prints medians over
 * rounds that interleave every scenario of every stack. `wrangler dev` puts
 * its own proxy in front of workerd, which costs more than the gateway
 * itself; the default `npm run bench` (./workerd.ts) runs on plain workerd.
 * Method: BENCHMARKS.md.
 */
import { rmSync, watch } from 'node:fs';
import os from 'node:os';
import { DEMO_PLATFORM_KEY } from '../../emulator/seed';
import { createTenant, type Stack, startStack } from '../stack';
import {
  keepAliveAgent,
  median,
  percentile,
  type RoundResult,
  runRound,
  type Target,
} from './load';
import { codeVersion, fmt, ratio, round3 } from './util';
import { type BenchContext, type Scenario, scenarios } from './wrangler-dev-scenarios';

const CONFIG = {
  rounds: 7,
  requestsPerRound: 1000,
  warmupRequests: 300,
  concurrency: 16,
  roundCapMs: 30_000,
  requestTimeoutMs: 10_000,
  /** A scenario with more failed requests than this share fails the bench. */
  maxErrorRate: 0.01,
};
// Stack i listens on FIRST_PORT + 2i (gateway) and FIRST_PORT + 2i + 1 (emulator):
// 8797/8798, 8799/8800, … — away from the dev server's 8787/8790 so both can run at once.
const FIRST_PORT = 8797;
const PERSIST_ROOT = '.wrangler/bench-state';
const NAME_WIDTH = Math.max(...scenarios.map((s) => s.name.length));

interface Summary {
  scenario: string;
  stack: number;
  rps: number;
  p50: number;
  p99: number;
  rpsMin: number;
  rpsMax: number;
  requests: number;
  errors: number;
  errorSamples: string[];
  /** X-Cache of one request sent after the warm-up (`–` when absent, as on the emulator). */
  xCache: string;
  compareWith?: string;
}

interface StackInfo {
  gatewayPort: number;
  vars: Record<string, string>;
}

const running: Stack[] = [];
async function stopAll(): Promise<void> {
  await Promise.all(running.splice(0).map((stack) => stack.stop()));
}
const stacks: StackInfo[] = [];
const srcChanges = new Set<string>();
let code = 'unknown';

/** Runs the whole wrangler dev bench and prints its report; resolves to the exit code. */
export async function runWranglerDevBench(): Promise<number> {
  const onSignal = (signal: NodeJS.Signals, exitCode: number) => () => {
    console.error(`\n${signal}: stopping the stacks`);
    void stopAll().finally(() => process.exit(exitCode));
  };
  process.once('SIGINT', onSignal('SIGINT', 130));
  process.once('SIGTERM', onSignal('SIGTERM', 143));

  // `wrangler dev` rebuilds and restarts the Worker when src/ changes, so a run
  // during an edit measures the restart, not the gateway: such a run is flagged.
  code = codeVersion();
  const watcher = watch('src', { recursive: true }, (_event, file) => srcChanges.add(String(file)));

  const began = performance.now();
  let summaries: Summary[];
  try {
    summaries = await runAll();
  } finally {
    watcher.close();
    await stopAll();
  }
  const totalSeconds = (performance.now() - began) / 1000;

  printReport(summaries);
  const failing = summaries.filter((s) => s.errors > CONFIG.maxErrorRate * s.requests);
  console.log(`\nbench took ${totalSeconds.toFixed(1)} s in total`);
  console.log(`BENCH_RESULT ${JSON.stringify(resultJson(summaries, totalSeconds))}`);
  let exitCode = 0;
  if (srcChanges.size > 0) {
    console.error(
      `INVALID: src/ changed during the run (${[...srcChanges].slice(0, 5).join(', ')}); wrangler dev reloaded the gateway`,
    );
    exitCode = 1;
  }
  if (failing.length > 0) {
    console.error(
      `FAILED: more than ${CONFIG.maxErrorRate * 100}% errors in ${failing.map((s) => s.scenario).join(', ')}`,
    );
    exitCode = 1;
  }
  return exitCode;
}

async function runAll(): Promise<Summary[]> {
  // Fresh KV and Durable Object state each run, so tenants from earlier runs do not pile up.
  rmSync(PERSIST_ROOT, { recursive: true, force: true });
  // One stack per distinct set of vars, all up before the first round.
  const contexts = new Map<string, BenchContext & { index: number }>();
  for (const { vars } of scenarios) {
    const key = varsKey(vars);
    if (contexts.has(key)) continue;
    const index = contexts.size;
    const gatewayPort = FIRST_PORT + 2 * index;
    stacks.push({ gatewayPort, vars });
    console.log(`== stack ${index + 1} (gateway :${gatewayPort}, ${varsLabel(vars)}): starting…`);
    const stack = await startStack({
      gatewayPort,
      emulatorPort: gatewayPort + 1,
      persistTo: `${PERSIST_ROOT}/${index + 1}`,
      // BENCH_VERBOSE=1 shows wrangler's and the emulator's output, e.g. to see why a round failed.
      quiet: !process.env.BENCH_VERBOSE,
      vars,
    });
    running.push(stack);
    const { token } = await createTenant(stack, 'bench', DEMO_PLATFORM_KEY);
    contexts.set(key, { stack, token, index });
  }

  const runs = scenarios.map((scenario) => {
    const ctx = contexts.get(varsKey(scenario.vars))!;
    const { url, headers } = scenario.request(ctx);
    const target: Target = {
      url: new URL(url),
      headers,
      agent: keepAliveAgent(CONFIG.concurrency),
      expect: scenario.expect ?? { status: 200, code: 0 },
    };
    return { scenario, stack: ctx.index + 1, target, rounds: [] as RoundResult[], xCache: '' };
  });
  const round = (target: Target, requests: number) =>
    runRound(target, {
      requests,
      concurrency: CONFIG.concurrency,
      capMs: CONFIG.roundCapMs,
      requestTimeoutMs: CONFIG.requestTimeoutMs,
    });

  try {
    // Warm-up: opens the keep-alive connections and warms JITs, the gateway's tenant memo and the cache; not counted.
    for (const run of runs) await round(run.target, CONFIG.warmupRequests);
    // What the gateway did with the request (HIT, BYPASS, …), checked once, for the report.
    for (const run of runs) {
      const res = await fetch(run.target.url, { headers: run.target.headers });
      await res.arrayBuffer();
      run.xCache = res.headers.get('x-cache') ?? '–';
    }
    for (let r = 0; r < CONFIG.rounds; r++) {
      // Alternate the order so no scenario always runs first (or right after the same one).
      const order = r % 2 === 0 ? runs : [...runs].reverse();
      for (const run of order) {
        const result = await round(run.target, CONFIG.requestsPerRound);
        run.rounds.push(result);
        console.log(
          `round ${r + 1}/${CONFIG.rounds}  ${run.scenario.name.padEnd(NAME_WIDTH)} ${fmt(rps(result), 0).padStart(6)} req/s  ` +
            `p50 ${fmt(percentile(result.latenciesMs, 50), 2)} ms  p99 ${fmt(percentile(result.latenciesMs, 99), 2)} ms` +
            (result.errors ? `  ${result.errors} errors` : ''),
        );
      }
    }
  } finally {
    for (const run of runs) run.target.agent.destroy();
  }
  return runs.map(({ scenario, stack, rounds, xCache }) =>
    summarize(scenario, stack, rounds, xCache),
  );
}

function varsKey(vars: Record<string, string>): string {
  return JSON.stringify(Object.entries(vars).sort(([a], [b]) => a.localeCompare(b)));
}

/** Vars in short, e.g. `LIMITS_ENABLED=true, DEFAULT_LIMITS={"policies":[{"name":"bu…`. */
function varsLabel(vars: Record<string, string>): string {
  const short = (v: string) => (v.length > 24 ? `${v.slice(0, 24)}…` : v);
  return (
    Object.entries(vars)
      .map(([k, v]) => `${k}=${short(v)}`)
      .join(', ') || 'default vars'
  );
}

/** Successful requests per second of wall time. */
function rps(r: RoundResult): number {
  return (r.ok / r.wallMs) * 1000;
}

function summarize(
  scenario: Scenario,
  stack: number,
  rounds: RoundResult[],
  xCache: string,
): Summary {
  const perRound = rounds.map(rps);
  return {
    scenario: scenario.name,
    stack,
    rps: median(perRound),
    p50: median(rounds.map((r) => percentile(r.latenciesMs, 50))),
    p99: median(rounds.map((r) => percentile(r.latenciesMs, 99))),
    rpsMin: Math.min(...perRound),
    rpsMax: Math.max(...perRound),
    requests: rounds.length * CONFIG.requestsPerRound,
    errors: rounds.reduce((n, r) => n + r.errors, 0),
    errorSamples: [...new Set(rounds.flatMap((r) => r.errorSamples))].slice(0, 5),
    xCache,
    ...(scenario.compareWith ? { compareWith: scenario.compareWith } : {}),
  };
}

/** Ratios of this scenario's medians to those of the one it is compared with. */
function ratios(s: Summary, all: Summary[]) {
  const base = all.find((b) => b.scenario === s.compareWith);
  return (
    base && {
      vs: base.scenario,
      throughput: s.rps / base.rps,
      p50: s.p50 / base.p50,
      p99: s.p99 / base.p99,
    }
  );
}

/**
 * Derived, not measured: wall time per request at full load (1 / throughput),
 * i.e. the machine time one request takes at this concurrency on these cores.
 */
function msPerRequest(s: Summary): number {
  return 1000 / s.rps;
}

function printReport(all: Summary[]): void {
  console.log(
    `\nMedians over ${CONFIG.rounds} interleaved rounds of ${CONFIG.requestsPerRound} requests, ` +
      `concurrency ${CONFIG.concurrency}, keep-alive; ${os.cpus().length} CPUs, Node ${process.version}; code ${code}`,
  );
  for (const [i, st] of stacks.entries())
    console.log(`stack ${i + 1}: gateway :${st.gatewayPort}, ${varsLabel(st.vars)}`);
  console.log(
    `\n${'scenario'.padEnd(NAME_WIDTH)} stack ${'req/s'.padStart(7)} ${'(min–max)'.padStart(13)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} x-cache  errors`,
  );
  for (const s of all) {
    const range = `${fmt(s.rpsMin, 0)}–${fmt(s.rpsMax, 0)}`;
    console.log(
      `${s.scenario.padEnd(NAME_WIDTH)} ${String(s.stack).padStart(5)} ${fmt(s.rps, 0).padStart(7)} ${range.padStart(13)} ` +
        `${fmt(s.p50, 2).padStart(7)} ${fmt(s.p99, 2).padStart(7)} ${s.xCache.padEnd(7)}  ${s.errors}/${s.requests}`,
    );
    for (const e of s.errorSamples) console.log(`    error: ${e}`);
  }
  console.log('');
  for (const s of all) {
    const r = ratios(s, all);
    if (!r) continue;
    const base = all.find((b) => b.scenario === r.vs)!;
    const diff = msPerRequest(s) - msPerRequest(base);
    console.log(
      `${s.scenario} / ${r.vs}: throughput ${ratio(r.throughput)} ×, p50 ${ratio(r.p50)} ×, p99 ${ratio(r.p99)} ×`,
    );
    console.log(
      `    derived, 1/throughput: ${s.scenario} ${fmt(msPerRequest(s), 3)} ms, ${r.vs} ${fmt(msPerRequest(base), 3)} ms per request` +
        ` → ${diff >= 0 ? s.scenario : r.vs} takes ${fmt(Math.abs(diff), 3)} ms more per request`,
    );
  }
}

function resultJson(all: Summary[], totalSeconds: number) {
  return {
    date: new Date().toISOString(),
    mode: 'wrangler-dev',
    code,
    srcChangedDuringRun: srcChanges.size > 0,
    config: { ...CONFIG, cpus: os.cpus().length, node: process.version },
    stacks,
    totalSeconds: round3(totalSeconds),
    scenarios: all.map((s) => ({
      scenario: s.scenario,
      stack: s.stack,
      rps: round3(s.rps),
      rpsMin: round3(s.rpsMin),
      rpsMax: round3(s.rpsMax),
      p50Ms: round3(s.p50),
      p99Ms: round3(s.p99),
      requests: s.requests,
      errors: s.errors,
      xCache: s.xCache,
      derivedMsPerRequest: round3(msPerRequest(s)),
      ...ratioJson(ratios(s, all)),
    })),
  };
}

function ratioJson(r: ReturnType<typeof ratios>) {
  return r
    ? {
        vs: r.vs,
        throughputRatio: round3(r.throughput),
        p50Ratio: round3(r.p50),
        p99Ratio: round3(r.p99),
      }
    : {};
}
