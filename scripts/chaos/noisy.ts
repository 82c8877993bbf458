/**
 * The noisy-neighbour scenario of `npm run chaos` (docs/RESILIENCE.md, "One
 * key's trouble stays its own"): 20 tenants on 20 platform keys at a steady
 * rate, tenant 0's key misbehaving in one way per run (faults aimed at its
 * key with `platform_key`), or tenant 0 flooding distinct cache keys; a quiet
 * run first, in the same invocation, as the baseline. Each run is a fresh
 * gateway (a fresh isolate). Prints, for the 19 healthy tenants: how many of
 * their requests the platform answered, the refusals and stale answers they
 * got, their latency against the quiet run, and how many of their cached
 * reads L1 answered.
 */
import { loadavg } from 'node:os';
import { median } from '../bench/load';
import { type GatewayBundle, startKeyPassingBareWorker } from '../workerd-host';
import { counter, type Gateway, gateway } from './gateway';
import { type Answer, type Emulator, percentile } from './load';
import { LoadThread, type Planned, type Replayed } from './load-thread';

/** Each tenant's load: uncached and cached reads a second. */
const UNCACHED_PER_S = 3;
const CACHED_PER_S = 1;
/** How long each run measures, after the same load for WARM_MS unmeasured (leases, JIT). */
const RUN_MS = 10_000;
const WARM_MS = 3000;
/** The flooding tenant's distinct cached reads a second. */
const FLOOD_PER_S = 100;
/** Small enough that the flood overflows it many times over (about 800 bytes an entry). */
const L1_BYTES = 256 * 1024;
/** Reads time out after 2 s in every run, so a hang is a timeout within the run. */
const VARS = {
  L1_CACHE_BYTES: String(L1_BYTES),
  LOG_SAMPLE_RATE: '1',
  ROUTE_OVERRIDES: JSON.stringify({ 'agent.list': { timeout_ms: 2000 } }),
};

interface Misbehaviour {
  name: string;
  /** The fault aimed at the noisy key, or none. */
  fault?: Record<string, unknown>;
  flood?: boolean;
}

const QUIET = 'none (quiet run)';
const MISBEHAVIOURS: Misbehaviour[] = [
  { name: QUIET },
  { name: '500s', fault: { kind: 'status', status: 500 } },
  { name: 'hangs past the 2 s deadline', fault: { kind: 'hang', delay_ms: 60_000 } },
  { name: '503, Retry-After: 300', fault: { kind: 'status', status: 503, retry_after: 300 } },
  { name: '429, Retry-After: 30', fault: { kind: 'status', status: 429, retry_after: 30 } },
  { name: 'huge bodies (9 MiB, over the limit)', fault: { kind: 'large_body' } },
  { name: 'huge bodies (7 MiB, passed on)', fault: { kind: 'large_body', bytes: 7 * 1024 * 1024 } },
  {
    name: 'huge bodies (7 MiB, declared length)',
    fault: { kind: 'large_body', bytes: 7 * 1024 * 1024, content_length: true },
  },
  { name: 'slow stream (1.5 s a body)', fault: { kind: 'slow_body', delay_ms: 1500 } },
  { name: 'floods distinct cache keys', flood: true },
  // The quiet run again, last: how much the machine alone moves the figures.
  { name: `${QUIET}, again` },
];

/**
 * The control: the same load through a bare Worker that forwards each tenant's own key
 * and checks nothing, quiet and with tenant 0's 7 MiB answers. How much the healthy
 * tenants' p99 rises there is what moving those bytes costs this machine, whatever
 * Worker is in front (docs/RESILIENCE.md, "What tenants share").
 */
const CONTROL: Misbehaviour[] = [
  { name: 'quiet' },
  { name: 'huge bodies (7 MiB)', fault: { kind: 'large_body', bytes: 7 * 1024 * 1024 } },
  {
    name: 'huge bodies (7 MiB, declared length)',
    fault: { kind: 'large_body', bytes: 7 * 1024 * 1024, content_length: true },
  },
];

interface Run {
  name: string;
  healthy: Replayed[];
  noisy: Replayed[];
  fromL1: number;
  cachedHealthy: number;
  /** The machine's 1-minute load average at the end of the run. */
  load: number;
}

/** The healthy tenants' load and the noisy tenant's, each on a thread of its own. */
interface Threads {
  healthy: LoadThread;
  noisy: LoadThread;
}

export async function noisyNeighbours(
  bundle: GatewayBundle,
  emu: Emulator,
  keys: string[],
): Promise<string[]> {
  const rounds = noisyRounds();
  // Every misbehaviour's runs, one a round: the rounds interleave, so the machine's
  // drift touches each misbehaviour alike, and each figure is a median over rounds.
  const misbehaviours = chosenMisbehaviours();
  const runs = new Map<string, Run[]>(misbehaviours.map((m) => [m.name, []]));
  const controlRuns = new Map<string, Run[]>(CONTROL.map((m) => [m.name, []]));
  const threads = { healthy: new LoadThread(), noisy: new LoadThread() };
  try {
    for (let round = 1; round <= rounds; round++) {
      for (const m of misbehaviours) {
        console.log(`   noisy neighbour, round ${round}/${rounds}: ${m.name}`);
        runs
          .get(m.name)
          ?.push(await run(await gatewayTarget(bundle, emu, keys), emu, keys, m, threads));
        await emu.clearFaults();
      }
      for (const m of CONTROL) {
        console.log(`   noisy neighbour, round ${round}/${rounds}: bare Worker, ${m.name}`);
        controlRuns
          .get(m.name)
          ?.push(await run(await bareTarget(emu, keys), emu, keys, m, threads));
        await emu.clearFaults();
      }
    }
  } finally {
    await Promise.all([threads.healthy.close(), threads.noisy.close()]);
  }
  // Each run's percentile of its healthy tenants' latencies.
  const perRun = (rs: Run[], p: number) =>
    rs.map((r) =>
      percentile(
        r.healthy.map((a) => a.ms),
        p,
      ),
    );
  const p99s = (rs: Run[]) => perRun(rs, 99);
  // The baseline: every quiet run, first and last of each round.
  const quietP99 = median(
    [...runs.entries()].filter(([name]) => name.startsWith(QUIET)).flatMap(([, rs]) => p99s(rs)),
  );
  const spread = (values: number[]) =>
    values.length > 1 ? ` (${fmt(Math.min(...values))}–${fmt(Math.max(...values))})` : '';
  const lines = [
    `5. Noisy neighbours: ${keys.length} tenants on ${keys.length} platform keys, each ${UNCACHED_PER_S} uncached + ${CACHED_PER_S} cached reads/s, ${RUN_MS / 1000} s a run on a fresh isolate; tenant 0 misbehaves, the other ${keys.length - 1} are measured`,
    `   ${rounds} round(s), interleaved; p50 and p99 are medians over the rounds (min–max), "p99 ÷ quiet" against the median of every quiet run's p99 (${fmt(quietP99)})`,
    '',
    '| tenant 0 | healthy requests | answered by the platform | 50301 / 50302 / stale | p50 | p99 | p99 ÷ quiet | cached reads from L1 | tenant 0 got | load avg |',
    '|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const [name, rs] of runs) {
    const healthy = rs.flatMap((r) => r.healthy);
    const p99 = median(p99s(rs));
    const answered = healthy.filter(byPlatform).length;
    const codeCount = (code: number) => healthy.filter((a) => a.code === code).length;
    const stale = healthy.filter((a) => a.xCache === 'STALE').length;
    const fromL1 = rs.reduce((n, r) => n + r.fromL1, 0);
    const cached = rs.reduce((n, r) => n + r.cachedHealthy, 0);
    const p50 = median(perRun(rs, 50));
    const load = rs.map((r) => r.load.toFixed(1)).join(', ');
    lines.push(
      `| ${name} | ${healthy.length} | ${pct(answered, healthy.length)} | ${codeCount(50301)} / ${codeCount(50302)} / ${stale} | ${fmt(p50)} | ${fmt(p99)}${spread(p99s(rs))} | ${(p99 / quietP99).toFixed(2)} | ${fromL1} of ${cached} | ${outcomes(rs.flatMap((r) => r.noisy))} | ${load} |`,
    );
  }
  const bareQuietP99 = median(p99s(controlRuns.get('quiet') ?? []));
  lines.push(
    '',
    `   The control: the same load through a bare Worker that forwards each tenant's own key and checks nothing (its cached reads go to the platform too), "p99 ÷ quiet" against its own quiet runs (${fmt(bareQuietP99)})`,
    '',
    '| tenant 0, bare Worker | healthy requests | answered by the platform | p50 | p99 | p99 ÷ quiet | tenant 0 got | tenant 0 p50 | load avg |',
    '|---|---|---|---|---|---|---|---|---|',
  );
  for (const [name, rs] of controlRuns) {
    const healthy = rs.flatMap((r) => r.healthy);
    const noisy = rs.flatMap((r) => r.noisy);
    const p99 = median(p99s(rs));
    lines.push(
      `| ${name} | ${healthy.length} | ${pct(healthy.filter(byPlatform).length, healthy.length)} | ${fmt(median(perRun(rs, 50)))} | ${fmt(p99)}${spread(p99s(rs))} | ${(p99 / bareQuietP99).toFixed(2)} | ${outcomes(noisy)} | ${fmt(
        percentile(
          noisy.map((a) => a.ms),
          50,
        ),
      )} | ${rs.map((r) => r.load.toFixed(1)).join(', ')} |`,
    );
  }
  return lines;
}

/** CHAOS_NOISY_ONLY=huge: only the misbehaviours whose names hold it, and the quiet runs. */
function chosenMisbehaviours(): Misbehaviour[] {
  const only = process.env.CHAOS_NOISY_ONLY;
  return only
    ? MISBEHAVIOURS.filter((m) => m.name.startsWith(QUIET) || m.name.includes(only))
    : MISBEHAVIOURS;
}

/** CHAOS_ROUNDS (default 1): how many times the whole list of misbehaviours runs. */
function noisyRounds(): number {
  const n = Number(process.env.CHAOS_ROUNDS ?? 1);
  if (!Number.isInteger(n) || n < 1 || n > 9)
    throw new Error('CHAOS_ROUNDS is a whole number from 1 to 9');
  return n;
}

/** What a run's load is sent to: the gateway, or the bare Worker of the control. */
interface Target {
  url: (path: string) => string;
  /** What each tenant presents, in the order of the keys. */
  tokens: string[];
  /** How many of the healthy tenants' cached reads since log line `from` L1 answered. */
  fromL1(from: number): number;
  logCount(): number;
  /** Said after a flood of distinct cache keys. */
  afterFlood(): Promise<string>;
  stop(): Promise<void>;
}

async function gatewayTarget(
  bundle: GatewayBundle,
  emu: Emulator,
  keys: string[],
): Promise<Target> {
  const gw = await gateway(bundle, emu, VARS, keys);
  const healthyIds = new Set(gw.tenantIds.slice(1));
  return {
    url: gw.url,
    tokens: gw.tokens,
    fromL1: (from) =>
      requestLines(gw, from).filter(
        (l) => l.route === 'team.list' && healthyIds.has(String(l.tenant_id)) && l.cache === 'L1',
      ).length,
    logCount: () => gw.host.logs().length,
    afterFlood: async () => {
      const stats = await gw.stats();
      const l1 = stats.l1 as { bytes: number; entries: number } | undefined;
      return `L1 after the flood: ${l1?.entries} entries, ${l1?.bytes} bytes of ${L1_BYTES}; cache API calls ${counter(stats, 'cache_api_calls')}`;
    },
    stop: () => gw.stop(),
  };
}

/** The control's bare Worker: each tenant presents its platform key itself. */
async function bareTarget(emu: Emulator, keys: string[]): Promise<Target> {
  const bare = await startKeyPassingBareWorker({ upstreamUrl: emu.url });
  return {
    url: (path) => bare.url + path,
    tokens: keys,
    fromL1: () => 0,
    logCount: () => 0,
    afterFlood: async () => 'no cache in the bare Worker',
    stop: () => bare.stop(),
  };
}

async function run(
  target: Target,
  emu: Emulator,
  keys: string[],
  m: Misbehaviour,
  threads: Threads,
): Promise<Run> {
  try {
    const n = keys.length;
    // Warm up with the same load: every tenant's lease and cached entry, connections, JIT.
    await replay(threads, plan(target, n, WARM_MS, false));
    if (m.fault) await emu.fault({ ...m.fault, platform_key: keys[0], for_ms: RUN_MS + 5000 });
    const logsBefore = target.logCount();
    const { healthy, noisy } = await replay(threads, plan(target, n, RUN_MS, m.flood === true));
    const fromL1 = target.fromL1(logsBefore);
    if (m.flood) console.log(`   ${await target.afterFlood()}`);
    return {
      name: m.name,
      healthy,
      noisy,
      fromL1,
      cachedHealthy: healthy.filter((a) => a.cached).length,
      load: loadavg()[0] ?? 0,
    };
  } finally {
    await target.stop();
  }
}

/**
 * Every tenant's steady load for `ms`, round robin: its uncached reads and its
 * cached one; with `flood`, tenant 0's distinct cached reads on top.
 */
function plan(gw: Target, n: number, ms: number, flood: boolean): Planned[] {
  const out: Planned[] = [];
  const stream = (perSecond: number, make: (i: number) => Omit<Planned, 'at'>) => {
    for (let i = 0; (i * 1000) / perSecond < ms; i++)
      out.push({ at: (i * 1000) / perSecond, ...make(i) });
  };
  const as = (tenant: number) => ({ tenant, token: gw.tokens[tenant] ?? '' });
  stream(UNCACHED_PER_S * n, (i) => ({ ...as(i % n), url: gw.url('/agent/lists'), cached: false }));
  stream(CACHED_PER_S * n, (i) => ({ ...as(i % n), url: gw.url(cachedPath(i % n)), cached: true }));
  if (flood) {
    stream(FLOOD_PER_S, (i) => ({
      ...as(0),
      url: gw.url(`/team/lists?page_num=${i + 1}`),
      cached: true,
    }));
  }
  return out.sort((a, b) => a.at - b.at);
}

/** The healthy tenants' plan and tenant 0's, started together on their threads. */
async function replay(threads: Threads, all: Planned[]) {
  const startAt = Date.now() + 50;
  const [healthy, noisy] = await Promise.all([
    threads.healthy.replay(
      all.filter((p) => p.tenant !== 0),
      startAt,
    ),
    threads.noisy.replay(
      all.filter((p) => p.tenant === 0),
      startAt,
    ),
  ]);
  return { healthy, noisy };
}

/** A tenant's one cached read (its own entry: cache keys are per platform key). */
const cachedPath = (tenant: number) => `/team/lists?page_size=${(tenant % 5) + 1}`;

/** The gateway's request log lines from the `from`th line printed on, parsed. */
function requestLines(gw: Gateway, from: number): Record<string, unknown>[] {
  return gw.host
    .logs()
    .slice(from)
    .flatMap((l) => {
      if (!l.message.startsWith('{')) return [];
      try {
        const parsed = JSON.parse(l.message) as Record<string, unknown>;
        return parsed.event === 'request' ? [parsed] : [];
      } catch {
        return [];
      }
    });
}

/** Answered by the platform: a success that is not a stale answer. */
const byPlatform = (a: Answer) => a.status === 200 && a.code === 0 && a.xCache !== 'STALE';

/** The noisy tenant's answers by status/code, most frequent first. */
function outcomes(answers: Answer[]): string {
  const counts = new Map<string, number>();
  for (const a of answers) {
    const k = `${a.status}/${a.code ?? '-'}${a.xCache === 'STALE' ? ' stale' : ''}`;
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return [...counts]
    .sort((x, y) => y[1] - x[1])
    .map(([k, v]) => `${k} ×${v}`)
    .join(', ');
}

const pct = (part: number, whole: number) =>
  whole === 0 ? 'n/a' : `${((100 * part) / whole).toFixed(1)} %`;
const fmt = (v: number) => (Number.isNaN(v) ? 'n/a' : `${v.toFixed(1)} ms`);
