/**
 * `npm run bench`: load-tests the scenarios in scripts/bench/scenarios.ts
 * against a local stack (platform emulator + gateway under `wrangler dev`)
 * and prints medians over interleaved rounds. Method and results: BENCHMARKS.md.
 */
import { execFileSync } from 'node:child_process';
import { rmSync, watch } from 'node:fs';
import os from 'node:os';
import { DEMO_PLATFORM_KEY } from '../emulator/seed';
import { keepAliveAgent, median, percentile, type RoundResult, runRound, type Target } from './bench/load';
import { groups, type Scenario, type ScenarioGroup } from './bench/scenarios';
import { createTenant, type Stack, startStack } from './stack';

const CONFIG = {
  rounds: 5,
  requestsPerRound: 2000,
  warmupRequests: 500,
  concurrency: 16,
  roundCapMs: 30_000,
  requestTimeoutMs: 10_000,
  /** A scenario with more failed requests than this share fails the bench. */
  maxErrorRate: 0.01,
};
// Away from the dev server's 8787/8790 so both can run at once.
const GATEWAY_PORT = 8797;
const EMULATOR_PORT = 8798;
const PERSIST_TO = '.wrangler/bench-state';

interface Summary {
  group: string;
  scenario: string;
  rps: number;
  p50: number;
  p99: number;
  rpsMin: number;
  rpsMax: number;
  requests: number;
  errors: number;
  errorSamples: string[];
  compareWith?: string;
}

let running: Stack | undefined;
async function stopRunning(): Promise<void> {
  const stack = running;
  running = undefined;
  await stack?.stop();
}
for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
  process.once(signal, () => {
    console.error(`\n${signal}: stopping the stack`);
    void stopRunning().finally(() => process.exit(code));
  });
}

// `wrangler dev` rebuilds and restarts the Worker when src/ changes, so a run
// during an edit measures the restart, not the gateway: such a run is flagged.
const code = codeVersion();
const srcChanges = new Set<string>();
const watcher = watch('src', { recursive: true }, (_event, file) => srcChanges.add(String(file)));

const began = performance.now();
const summaries: Summary[] = [];
try {
  for (const group of groups) summaries.push(...(await runGroup(group)));
} finally {
  watcher.close();
  await stopRunning();
}
const totalSeconds = (performance.now() - began) / 1000;

printReport(summaries);
const failing = summaries.filter((s) => s.errors > CONFIG.maxErrorRate * s.requests);
console.log(`\nbench took ${totalSeconds.toFixed(1)} s in total`);
console.log(`BENCH_RESULT ${JSON.stringify(resultJson(summaries, totalSeconds))}`);
if (srcChanges.size > 0) {
  console.error(`INVALID: src/ changed during the run (${[...srcChanges].slice(0, 5).join(', ')}); wrangler dev reloaded the gateway`);
  process.exitCode = 1;
}
if (failing.length > 0) {
  console.error(`FAILED: more than ${CONFIG.maxErrorRate * 100}% errors in ${failing.map((s) => s.scenario).join(', ')}`);
  process.exitCode = 1;
}

async function runGroup(group: ScenarioGroup): Promise<Summary[]> {
  // Fresh KV state each run, so tenants from earlier runs do not pile up.
  rmSync(PERSIST_TO, { recursive: true, force: true });
  console.log(`\n== ${group.name}: starting the stack…`);
  const stack = await startStack({
    gatewayPort: GATEWAY_PORT,
    emulatorPort: EMULATOR_PORT,
    persistTo: PERSIST_TO,
    // BENCH_VERBOSE=1 shows wrangler's and the emulator's output, e.g. to see why a round failed.
    quiet: !process.env.BENCH_VERBOSE,
    ...(group.vars ? { vars: group.vars } : {}),
  });
  running = stack;
  const { token } = await createTenant(stack, 'bench', DEMO_PLATFORM_KEY);
  const runs = group.scenarios.map((scenario) => {
    const { url, headers } = scenario.request({ stack, token });
    const target: Target = { url: new URL(url), headers, agent: keepAliveAgent(CONFIG.concurrency) };
    return { scenario, target, rounds: [] as RoundResult[] };
  });
  const round = (target: Target, requests: number) =>
    runRound(target, { requests, concurrency: CONFIG.concurrency, capMs: CONFIG.roundCapMs, requestTimeoutMs: CONFIG.requestTimeoutMs });

  try {
    // Warm-up: opens the keep-alive connections and warms JITs and the gateway's tenant memo; not counted.
    for (const run of runs) await round(run.target, CONFIG.warmupRequests);
    for (let r = 0; r < CONFIG.rounds; r++) {
      // Alternate the order so neither scenario always runs first (or right after the other).
      const order = r % 2 === 0 ? runs : [...runs].reverse();
      for (const run of order) {
        const result = await round(run.target, CONFIG.requestsPerRound);
        run.rounds.push(result);
        console.log(
          `round ${r + 1}/${CONFIG.rounds}  ${run.scenario.name.padEnd(12)} ${fmt(rps(result), 0).padStart(6)} req/s  ` +
            `p50 ${fmt(percentile(result.latenciesMs, 50), 2)} ms  p99 ${fmt(percentile(result.latenciesMs, 99), 2)} ms` +
            (result.errors ? `  ${result.errors} errors` : ''),
        );
      }
    }
  } finally {
    for (const run of runs) run.target.agent.destroy();
    await stopRunning();
  }
  return runs.map(({ scenario, rounds }) => summarize(group, scenario, rounds));
}

/** Successful requests per second of wall time. */
function rps(r: RoundResult): number {
  return (r.ok / r.wallMs) * 1000;
}

function summarize(group: ScenarioGroup, scenario: Scenario, rounds: RoundResult[]): Summary {
  const perRound = rounds.map(rps);
  return {
    group: group.name,
    scenario: scenario.name,
    rps: median(perRound),
    p50: median(rounds.map((r) => percentile(r.latenciesMs, 50))),
    p99: median(rounds.map((r) => percentile(r.latenciesMs, 99))),
    rpsMin: Math.min(...perRound),
    rpsMax: Math.max(...perRound),
    requests: rounds.length * CONFIG.requestsPerRound,
    errors: rounds.reduce((n, r) => n + r.errors, 0),
    errorSamples: [...new Set(rounds.flatMap((r) => r.errorSamples))].slice(0, 5),
    ...(scenario.compareWith ? { compareWith: scenario.compareWith } : {}),
  };
}

function ratios(s: Summary, all: Summary[]) {
  const base = all.find((b) => b.group === s.group && b.scenario === s.compareWith);
  return base && { vs: base.scenario, throughput: s.rps / base.rps, p50: s.p50 / base.p50, p99: s.p99 / base.p99 };
}

function printReport(all: Summary[]): void {
  console.log(
    `\nMedians over ${CONFIG.rounds} interleaved rounds of ${CONFIG.requestsPerRound} requests, ` +
      `concurrency ${CONFIG.concurrency}, keep-alive; ${os.cpus().length} CPUs, Node ${process.version}; code ${code}`,
  );
  for (const group of new Set(all.map((s) => s.group))) {
    const rows = all.filter((s) => s.group === group);
    console.log(`\n${group}`);
    console.log(`${'scenario'.padEnd(12)} ${'req/s'.padStart(7)} ${'(min–max)'.padStart(13)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)}  errors`);
    for (const s of rows) {
      const range = `${fmt(s.rpsMin, 0)}–${fmt(s.rpsMax, 0)}`;
      console.log(
        `${s.scenario.padEnd(12)} ${fmt(s.rps, 0).padStart(7)} ${range.padStart(13)} ${fmt(s.p50, 2).padStart(7)} ${fmt(s.p99, 2).padStart(7)}  ${s.errors}/${s.requests}`,
      );
      for (const e of s.errorSamples) console.log(`    error: ${e}`);
    }
    for (const s of rows) {
      const r = ratios(s, all);
      if (r) {
        console.log(
          `${s.scenario} throughput = ${ratio(r.throughput)} × ${r.vs}; p50 = ${ratio(r.p50)} × ${r.vs}; p99 = ${ratio(r.p99)} × ${r.vs}`,
        );
      }
    }
  }
}

function resultJson(all: Summary[], totalSeconds: number) {
  return {
    date: new Date().toISOString(),
    code,
    srcChangedDuringRun: srcChanges.size > 0,
    config: { ...CONFIG, cpus: os.cpus().length, node: process.version },
    totalSeconds: round3(totalSeconds),
    scenarios: all.map((s) => ({
      group: s.group,
      scenario: s.scenario,
      rps: round3(s.rps),
      p50Ms: round3(s.p50),
      p99Ms: round3(s.p99),
      requests: s.requests,
      errors: s.errors,
      ...ratioJson(ratios(s, all)),
    })),
  };
}

function ratioJson(r: ReturnType<typeof ratios>) {
  return r ? { vs: r.vs, throughputRatio: round3(r.throughput), p50Ratio: round3(r.p50), p99Ratio: round3(r.p99) } : {};
}

/** The commit measured, marked dirty when src/ or wrangler.toml differ from it. */
function codeVersion(): string {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { encoding: 'utf8' }).trim();
    return git('rev-parse', '--short', 'HEAD') + (git('status', '--porcelain', '--', 'src', 'wrangler.toml') ? '+dirty' : '');
  } catch {
    return 'unknown';
  }
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}

/** Three significant digits, so small ratios such as 0.0321 keep their precision. */
function ratio(n: number): string {
  return Number.isFinite(n) ? String(Number(n.toPrecision(3))) : '–';
}

function fmt(n: number, digits: number): string {
  return Number.isFinite(n) ? n.toFixed(digits) : '–';
}
