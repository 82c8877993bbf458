/**
 * `npm run bench:profile`: where a gateway request's Worker CPU goes, step by
 * step. Serves an unminified bundle of the gateway (limits on, as the bench's
 * `gateway-miss`/`-hit`/`-404`) on plain workerd with its V8 inspector open,
 * records a CPU profile of the gateway's isolate while it answers each
 * scenario, and prints the sampled time per request by step (the source
 * modules of ./profile-steps.ts) and the busiest functions. It also reads
 * /proc CPU per request, with the profiler off, for the same scenarios, the
 * bare forwarding Worker and the bare Worker's own 404 (what workerd costs
 * per request before any gateway code). Method and results: BENCHMARKS.md,
 * "Where the CPU goes".
 *
 *   npm run bench:profile -- --requests 3000 --interval 50
 *   npm run bench:profile -- --callers 'header,(anonymous)'   who calls these, by call chain
 *   npm run bench:profile -- --no-profile --rounds 11 --base /tmp/main/wrangler.toml
 *   npm run bench:profile -- --only gateway-hit,mcp-hit       an MCP tool call beside its HTTP call
 */
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import WebSocket from 'ws';
import { DEMO_PLATFORM_KEY } from '../../emulator/seed';
import { freePort } from '../free-port';
import {
  buildGatewayBundle,
  type GatewayBundle,
  startBareWorker,
  startGateway,
} from '../workerd-host';
import { cpuMs, pidListeningOn } from './cpu';
import { keepAliveAgent, median, runRound, type Target } from './load';
import { type ModuleRange, moduleRanges, stepOf } from './profile-steps';
import { scenarios, WORKERS } from './scenarios';
import { fmt } from './util';
import { setUpGateway, startEmulatorProcess } from './workerd';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '3000' },
    rounds: { type: 'string', default: '3' },
    interval: { type: 'string', default: '50' },
    concurrency: { type: 'string', default: '16' },
    top: { type: 'string', default: '25' },
    /** A second gateway with these vars, measured beside the first, e.g. LOG_SAMPLE_RATE=0 (a step switched off). */
    off: { type: 'string' },
    /** Profile the gateway with --off's vars (the inspector makes console.log dearer than it is: profile with LOG_SAMPLE_RATE=0). */
    'profile-off': { type: 'boolean', default: false },
    /**
     * Another checkout's wrangler.toml (e.g. main's, from `git archive`): its gateway is
     * measured beside this one, same vars, as "(base)", for a before/after in one run.
     */
    base: { type: 'string' },
    /** Only the /proc figures, no profile. */
    'no-profile': { type: 'boolean', default: false },
    /** Also print who calls these functions (comma-separated names), by caller chain. */
    callers: { type: 'string' },
    /** Only these scenarios (comma-separated), e.g. gateway-hit,mcp-hit. */
    only: { type: 'string' },
  },
});
const REQUESTS = Number(values.requests);
const ROUNDS = Number(values.rounds);
const INTERVAL_US = Number(values.interval);
const CONCURRENCY = Number(values.concurrency);
const TOP = Number(values.top);

const offVars = values.off
  ? Object.fromEntries(values.off.split(',').map((kv) => kv.split('=') as [string, string]))
  : null;

const ALL_PROFILED = [
  'gateway-miss',
  'gateway-hit',
  'gateway-404',
  'mcp-hit',
  'gateway-hit-small',
  'mcp-hit-small',
] as const;
const PROFILED = values.only
  ? ALL_PROFILED.filter((name) => values.only?.split(',').includes(name))
  : ALL_PROFILED;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** A Chrome DevTools Protocol session with one Worker's isolate, through Miniflare's inspector proxy. */
class Inspector {
  private nextId = 1;
  private readonly waiting = new Map<
    number,
    (reply: { result?: unknown; error?: unknown }) => void
  >();
  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data)) as { id?: number; result?: unknown; error?: unknown };
      if (msg.id !== undefined) this.waiting.get(msg.id)?.(msg);
    });
  }

  static async open(port: number, worker: string): Promise<Inspector> {
    const list = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
      title: string;
      webSocketDebuggerUrl: string;
    }[];
    const entry = list.find((w) => w.title.endsWith(worker)) ?? list[0];
    if (!entry) throw new Error(`no inspector target for ${worker}: ${JSON.stringify(list)}`);
    const ws = new WebSocket(entry.webSocketDebuggerUrl, {
      headers: { origin: 'http://localhost' },
    });
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new Inspector(ws)));
      ws.once('error', reject);
    });
  }

  async send<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.nextId++;
    const reply = await new Promise<{ result?: unknown; error?: unknown }>((resolve) => {
      this.waiting.set(id, resolve);
      this.ws.send(JSON.stringify({ id, method, params }));
    });
    this.waiting.delete(id);
    if (reply.error) throw new Error(`${method}: ${JSON.stringify(reply.error)}`);
    return reply.result as T;
  }

  close(): void {
    this.ws.close();
  }
}

/** µs of samples per node id (self time). */
function selfTimes(profile: CpuProfile): Map<number, number> {
  const self = new Map<number, number>();
  // timeDeltas[i] is the time before sample i; the time a sample stands for is the next delta.
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = profile.timeDeltas[i + 1] ?? 0;
    const id = profile.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + dt);
  }
  return self;
}

function summarize(profile: CpuProfile, ranges: ModuleRange[], requests: number) {
  const self = selfTimes(profile);
  const byStep = new Map<string, number>();
  const byFunction = new Map<string, number>();
  const parent = new Map<number, ProfileNode>();
  for (const node of profile.nodes)
    for (const child of node.children ?? []) parent.set(child, node);
  /** The nearest caller with a source position: where a native call's time is spent from. */
  const caller = (node: ProfileNode): string => {
    for (let p = parent.get(node.id); p; p = parent.get(p.id)) {
      const { functionName, url, lineNumber } = p.callFrame;
      if (url)
        return `${functionName || '(anonymous)'} ${stepOf(functionName, url, lineNumber, ranges).module}:${lineNumber + 1}`;
    }
    return '(top)';
  };
  const chainOf = (node: ProfileNode): string => {
    const names: string[] = [];
    for (let p = parent.get(node.id); p && names.length < 5; p = parent.get(p.id))
      names.push(`${p.callFrame.functionName || '(anonymous)'}:${p.callFrame.lineNumber + 1}`);
    return names.join(' < ');
  };
  const wanted = new Set((values.callers ?? '').split(',').filter(Boolean));
  const byChain = new Map<string, number>();
  let busy = 0;
  for (const node of profile.nodes) {
    const us = self.get(node.id) ?? 0;
    if (us === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)') continue;
    busy += us;
    const { step, module } = stepOf(functionName, url, lineNumber, ranges);
    byStep.set(step, (byStep.get(step) ?? 0) + us);
    const key = url
      ? `${functionName || '(anonymous)'} ${module}:${lineNumber + 1}`
      : `${functionName || '(anonymous)'} [native] from ${caller(node)}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
    if (wanted.has(functionName || '(anonymous)')) {
      const chain = `${functionName || '(anonymous)'} < ${chainOf(node)}`;
      byChain.set(chain, (byChain.get(chain) ?? 0) + us);
    }
  }
  const per = (us: number) => us / requests;
  return {
    busyUs: per(busy),
    steps: [...byStep].map(([k, v]) => [k, per(v)] as const).sort((a, b) => b[1] - a[1]),
    functions: [...byFunction].map(([k, v]) => [k, per(v)] as const).sort((a, b) => b[1] - a[1]),
    chains: [...byChain].map(([k, v]) => [k, per(v)] as const).sort((a, b) => b[1] - a[1]),
  };
}

type Named = Target & { pid: number | null };

/** The bench's request for `scenario` against `baseUrl`. */
function targetOf(
  scenarioName: string,
  baseUrl: string,
  token: string,
  agent: Target['agent'],
): Named {
  const scenario = scenarios.find((s) => s.name === scenarioName);
  if (!scenario) throw new Error(`no scenario ${scenarioName}`);
  const { path: p, headers, body } = scenario.request(token);
  return {
    url: new URL(p, baseUrl),
    headers,
    ...(body !== undefined ? { body } : {}),
    agent,
    expect: scenario.expect ?? { status: 200, code: 0 },
    pid: pidListeningOn(Number(new URL(baseUrl).port)),
  };
}

const round = (t: Target, requests: number) =>
  runRound(t, { requests, concurrency: CONCURRENCY, capMs: 60_000, requestTimeoutMs: 10_000 });

async function startBenchGateway(
  emulatorUrl: string,
  bundle: GatewayBundle,
  vars: Record<string, string>,
  inspectorPort?: number,
) {
  const spec = WORKERS['limits-on'];
  if (spec.kind !== 'gateway') throw new Error('limits-on is a gateway');
  const host = await startGateway({
    platformBaseUrl: emulatorUrl,
    vars: { ...spec.vars, ...vars },
    bundle,
    staticAssets: false,
    ...(inspectorPort ? { inspectorPort } : {}),
  });
  const gw = await setUpGateway(host);
  return { host, token: gw.token };
}

/**
 * This checkout against the base, round by round: the median of each round's ratio, and
 * its range, so the machine's drift from round to round counts less. What it can resolve
 * here: BENCHMARKS.md, "How small a change an A/B run can see" (an A/A run).
 */
function printPairedRatios(samples: Map<string, number[]>): void {
  console.log('\nthis checkout ÷ base, per round (median, min–max):');
  for (const name of PROFILED) {
    const mine = samples.get(name) ?? [];
    const theirs = samples.get(`${name} (base)`) ?? [];
    const ratios = mine.map((v, i) => v / (theirs[i] ?? NaN)).filter(Number.isFinite);
    if (ratios.length === 0) continue;
    console.log(
      `  ${name.padEnd(22)} ${fmt(median(ratios), 3)}  (${fmt(Math.min(...ratios), 3)}–${fmt(Math.max(...ratios), 3)})`,
    );
  }
}

/** Worker CPU per request from /proc, profiler off, interleaved rounds; medians. */
async function measureCpu(
  emulatorUrl: string,
  bundle: GatewayBundle,
  baseBundle: GatewayBundle | null,
): Promise<Map<string, number>> {
  const agent = keepAliveAgent(CONCURRENCY);
  const bare = await startBareWorker({ upstreamUrl: emulatorUrl, platformKey: DEMO_PLATFORM_KEY });
  const on = await startBenchGateway(emulatorUrl, bundle, {});
  const off = offVars ? await startBenchGateway(emulatorUrl, bundle, offVars) : null;
  const base = baseBundle ? await startBenchGateway(emulatorUrl, baseBundle, {}) : null;
  try {
    const targets = new Map<string, Named>([
      ['bare', targetOf('bare', bare.url, '', agent)],
      // The bare Worker answers any other path with a 404 envelope itself: workerd's own cost.
      ['bare-404', targetOf('gateway-404', bare.url, '', agent)],
    ]);
    for (const name of PROFILED) targets.set(name, targetOf(name, on.host.url, on.token, agent));
    if (off)
      for (const name of PROFILED)
        targets.set(`${name} (off)`, targetOf(name, off.host.url, off.token, agent));
    if (base)
      for (const name of PROFILED)
        targets.set(`${name} (base)`, targetOf(name, base.host.url, base.token, agent));
    for (const t of targets.values()) await round(t, 500);
    const names = [...targets.keys()];
    const samples = new Map<string, number[]>(names.map((n) => [n, []]));
    for (let r = 0; r < ROUNDS; r++) {
      for (const name of r % 2 ? [...names].reverse() : names) {
        const t = targets.get(name)!;
        const before = cpuMs(t.pid);
        const res = await round(t, REQUESTS);
        const after = cpuMs(t.pid);
        if (res.errors > 0) console.log(`  ${name}: ${res.errors} errors ${res.errorSamples[0]}`);
        if (before !== null && after !== null)
          samples.get(name)!.push(((after - before) * 1000) / res.sent);
      }
    }
    if (base) printPairedRatios(samples);
    return new Map(names.map((n) => [n, samples.get(n)!.length ? median(samples.get(n)!) : NaN]));
  } finally {
    await Promise.allSettled([bare.stop(), on.host.stop(), off?.host.stop(), base?.host.stop()]);
  }
}

async function main(): Promise<void> {
  console.log('== building the gateway as deployed, and unminified (names kept for the profile)');
  const deployed = await buildGatewayBundle();
  const unminified = await buildGatewayBundle({ minify: false });
  const baseBundle = values.base ? await buildGatewayBundle({ configPath: values.base }) : null;
  const ranges = moduleRanges(readFileSync(unminified.main, 'utf8'));
  const emulator = await startEmulatorProcess(0);
  try {
    const cpu = await measureCpu(emulator.url, deployed, baseBundle);
    console.log(
      `\nWorker CPU µs per request from /proc, deployed bundle, no profiler (medians of ${ROUNDS} rounds of ${REQUESTS}; load avg ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}${offVars ? `; "(off)": ${values.off}` : ''}):`,
    );
    const bareUs = cpu.get('bare')!;
    for (const [n, us] of cpu)
      console.log(`  ${n.padEnd(22)} ${fmt(us, 0).padStart(6)} µs  ${fmt(us / bareUs, 2)} × bare`);

    if (values['no-profile']) return;
    const inspectorPort = await freePort();
    const gw = await startBenchGateway(
      emulator.url,
      unminified,
      values['profile-off'] && offVars ? offVars : {},
      inspectorPort,
    );
    const inspector = await Inspector.open(inspectorPort, 'gateway');
    try {
      const agent = keepAliveAgent(CONCURRENCY);
      await inspector.send('Profiler.enable');
      await inspector.send('Profiler.setSamplingInterval', { interval: INTERVAL_US });
      for (const name of PROFILED) {
        const t = targetOf(name, gw.host.url, gw.token, agent);
        await round(t, 500);
        await inspector.send('Profiler.start');
        const res = await round(t, REQUESTS);
        const { profile } = await inspector.send<{ profile: CpuProfile }>('Profiler.stop');
        const s = summarize(profile, ranges, res.sent);
        const profiledOff = values['profile-off'] && offVars;
        const procUs = cpu.get(profiledOff ? `${name} (off)` : name)!;
        console.log(
          `\n== ${name}: CPU profile of the gateway isolate (unminified), ${res.sent} requests, ${INTERVAL_US} µs sampling; ` +
            `sampled busy ${fmt(s.busyUs, 0)} µs per request; /proc, deployed, no profiler: ${fmt(procUs, 0)}`,
        );
        // The profiler slows everything down; the shares are its, the µs the /proc figure's.
        console.log(`${'step'.padEnd(46)} ${'sampled'.padStart(8)} ${'µs'.padStart(6)}  share`);
        for (const [step, us] of s.steps)
          console.log(
            `${step.padEnd(46)} ${fmt(us, 1).padStart(8)} ${fmt((us / s.busyUs) * procUs, 1).padStart(6)}  ${fmt((100 * us) / s.busyUs, 1).padStart(5)} %`,
          );
        console.log('top functions (self µs per request):');
        for (const [fn, us] of s.functions.slice(0, TOP))
          console.log(`  ${fmt(us, 1).padStart(6)}  ${fn}`);
        if (s.chains.length > 0) console.log('callers (self µs per request):');
        for (const [chain, us] of s.chains.slice(0, TOP))
          console.log(`  ${fmt(us, 1).padStart(6)}  ${chain}`);
      }
    } finally {
      inspector.close();
      await gw.host.stop();
    }
  } finally {
    await emulator.stop();
    deployed.remove();
    baseBundle?.remove();
    unminified.remove();
  }
}

await main();
// The bench's threads and sockets would keep the process up otherwise.
process.exit(0);
