/**
 * `npm run chaos`: the gateway on plain workerd (the `miniflare` package, as
 * `npm run bench` runs it) in front of the emulator, on loopback, while the
 * emulator fails in the ways of issue 23; prints the figures
 * docs/RESILIENCE.md promises (one run is in BENCHMARKS.md). Four scenarios,
 * each on a gateway of its own (a fresh isolate), about two minutes in all:
 *
 * 1. a 30 s outage (every connection cut) under steady load of cached and
 *    uncached reads;
 * 2. a 503 storm with `Retry-After: 5`;
 * 3. 50 % of platform answers a 503 without Retry-After, for 10 s;
 * 4. 1,000 `session.create` calls with an Idempotency-Key, each sent twice,
 *    the platform's answer to every other first call lost after it acted.
 *
 *   npm run chaos
 *   CHAOS_VERBOSE=1 npm run chaos    # also print workerd's warnings in full
 */

import { DEMO_PLATFORM_KEY } from '../emulator/seed';
import { startEmulator } from '../emulator/server';
import {
  type Answer,
  ask,
  type Emulator,
  emulatorControl,
  paced,
  percentile,
  pool,
  sleep,
} from './chaos/load';
import {
  buildGatewayBundle,
  type GatewayBundle,
  type GatewayHost,
  startGateway,
} from './workerd-host';

const HUGE = 1_000_000_000;
/** Limits that never refuse: the scenarios measure the platform's failures, not the tenant's. */
const NEVER_REFUSED = JSON.stringify({
  policies: [{ name: 'burst', limit: HUGE, window_s: 10 }],
  quota: { daily: HUGE, monthly: HUGE },
});
const CODE = { unavailable: 50301, backingOff: 50302 };

interface Gateway {
  host: GatewayHost;
  token: string;
  url: (path: string) => string;
  stats(): Promise<Record<string, number>>;
}

const hosts: GatewayHost[] = [];

async function gateway(
  bundle: GatewayBundle,
  emu: Emulator,
  vars: Record<string, string> = {},
): Promise<Gateway> {
  const host = await startGateway({
    bundle,
    platformBaseUrl: emu.url,
    vars: { DEFAULT_LIMITS: NEVER_REFUSED, LOG_SAMPLE_RATE: '0', ...vars },
  });
  hosts.push(host);
  const admin = { authorization: `Bearer ${host.adminToken}`, 'content-type': 'application/json' };
  const res = await fetch(`${host.url}/admin/tenants`, {
    method: 'POST',
    headers: admin,
    body: JSON.stringify({ name: 'chaos', platform_key: DEMO_PLATFORM_KEY }),
  });
  const body = (await res.json()) as { data: { token: string } };
  if (res.status !== 201) throw new Error(`creating the tenant failed: HTTP ${res.status}`);
  return {
    host,
    token: body.data.token,
    url: (path) => `${host.url}${path}`,
    stats: async () => {
      const r = await fetch(`${host.url}/admin/stats`, { headers: admin });
      return ((await r.json()) as { data: { isolate: Record<string, number> } }).data.isolate;
    },
  };
}

const pct = (part: number, whole: number) =>
  whole === 0 ? 'n/a' : `${((100 * part) / whole).toFixed(1)} %`;
const ms = (v: number) => (Number.isNaN(v) ? 'n/a' : `${v.toFixed(1)} ms`);
const ok = (a: Answer) => a.status === 200 && a.code === 0;

/** 1: a 30 s outage under steady load. */
async function outage(bundle: GatewayBundle, emu: Emulator): Promise<string[]> {
  // team.list fresh 2 s, then 2 s of grace: during the outage it can only be answered stale.
  const gw = await gateway(bundle, emu, {
    // Every request logged, to count the lines that say stale_reason.
    LOG_SAMPLE_RATE: '1',
    ROUTE_OVERRIDES: JSON.stringify({
      'team.list': { cache: { ttl_s: 2, grace_s: 2, stale_if_error_s: 86_400 } },
    }),
  });
  const OUTAGE_AT = 8_000;
  const OUTAGE_MS = 30_000;
  const TOTAL = 53_000;
  const began = performance.now();
  const cachedPaths = [1, 2, 3, 4].map((n) => `/team/lists?page_size=${n}`);
  let callsAtStart = 0;
  let callsAtEnd = 0;
  let statsAtStart: Record<string, number> = {};
  let statsAtEnd: Record<string, number> = {};
  const timeline = (async () => {
    await sleep(OUTAGE_AT);
    callsAtStart = await emu.calls();
    statsAtStart = await gw.stats();
    await emu.fault({ kind: 'reset', for_ms: OUTAGE_MS });
    await sleep(OUTAGE_MS);
    callsAtEnd = await emu.calls();
    statsAtEnd = await gw.stats();
  })();
  const [cached, uncached] = await Promise.all([
    paced(20, TOTAL, (i) =>
      ask(gw.url(cachedPaths[i % cachedPaths.length] ?? ''), gw.token, began),
    ),
    paced(20, TOTAL, () => ask(gw.url('/agent/lists'), gw.token, began)),
  ]);
  await timeline;
  const during = (a: Answer) => a.at >= OUTAGE_AT + 100 && a.at < OUTAGE_AT + OUTAGE_MS;
  const cachedDuring = cached.filter(during);
  const staleDuring = cachedDuring.filter((a) => ok(a) && a.xCache === 'STALE');
  const firstOpen = uncached.find((a) => during(a) && a.code === CODE.unavailable);
  const afterOpen = uncached.filter((a) => during(a) && firstOpen && a.at > firstOpen.at);
  const refusedFast = afterOpen.filter((a) => a.code === CODE.unavailable);
  const ended = OUTAGE_AT + OUTAGE_MS;
  const after = uncached.filter((a) => a.at >= ended);
  const lastBad = [...after].reverse().find((a) => !ok(a));
  const firstGood = after.find(ok);
  const retries = (statsAtEnd.upstream_retries ?? 0) - (statsAtStart.upstream_retries ?? 0);
  const platformCalls = callsAtEnd - callsAtStart;
  const staleLogged = gw.host
    .logs()
    .filter((l) => /"stale_reason":"(unreachable|breaker_open)"/.test(l.message)).length;
  return [
    '1. A 30 s platform outage (every connection cut) under steady load: 20 cached + 20 uncached reads/s',
    `   cached reads answered during the outage: ${pct(cachedDuring.filter(ok).length, cachedDuring.length)} of ${cachedDuring.length} (stale: ${staleDuring.length}, with X-Stale-Reason; ${staleLogged} request log lines say stale_reason)`,
    `   breaker open after ${firstOpen ? ((firstOpen.at - OUTAGE_AT) / 1000).toFixed(2) : 'n/a'} s; uncached calls after that: ${afterOpen.length}, answered 50301 at once: ${pct(refusedFast.length, afterOpen.length)}, p50 ${ms(
      percentile(
        refusedFast.map((a) => a.ms),
        50,
      ),
    )}, p95 ${ms(
      percentile(
        refusedFast.map((a) => a.ms),
        95,
      ),
    )}, max ${ms(Math.max(...refusedFast.map((a) => a.ms)))}`,
    `   platform calls during the 30 s: ${platformCalls} (of ${cachedDuring.length + uncached.filter(during).length} gateway requests): retries ${retries}, the rest first calls before the breaker opened and probes`,
    `   back to normal after the platform returned: first uncached success after ${firstGood ? ((firstGood.at - ended) / 1000).toFixed(2) : 'n/a'} s, all successes from ${lastBad ? ((lastBad.at - ended) / 1000).toFixed(2) : '0.00'} s`,
  ];
}

/** 2: a 503 storm with Retry-After: 5. */
async function storm(bundle: GatewayBundle, emu: Emulator): Promise<string[]> {
  const gw = await gateway(bundle, emu);
  const began = performance.now();
  let during = 0;
  const timeline = (async () => {
    await sleep(2000);
    const before = await emu.calls();
    // For those 5 s the platform answers every call with 503 and Retry-After: 5.
    await emu.fault({ kind: 'status', status: 503, retry_after: 5, for_ms: 5000 });
    await sleep(5000);
    during = (await emu.calls()) - before;
  })();
  const answers = await paced(20, 12_000, () => ask(gw.url('/agent/lists'), gw.token, began));
  await timeline;
  const passed = answers.filter((a) => a.code === CODE.backingOff && !a.held);
  const held = answers.filter((a) => a.code === CODE.backingOff && a.held);
  const stormAt = passed[0]?.at ?? Number.NaN;
  const resumed = answers.find((a) => a.at > stormAt && ok(a));
  return [
    '2. A platform 503 storm with Retry-After: 5 (20 uncached reads/s, one isolate)',
    `   platform calls in the 5 s of the storm: ${during} (503s passed on with Retry-After: ${passed.length}; held and answered at once: ${held.length}, p95 ${ms(
      percentile(
        held.map((a) => a.ms),
        95,
      ),
    )})`,
    `   first success after the first 503: ${resumed ? ((resumed.at - stormAt) / 1000).toFixed(2) : 'n/a'} s (the pause asked for: 5 s)`,
  ];
}

/** 3: half the platform's answers are a 503 without Retry-After. */
async function flaky(bundle: GatewayBundle, emu: Emulator): Promise<string[]> {
  const gw = await gateway(bundle, emu);
  const began = performance.now();
  const before = await emu.calls();
  const statsBefore = await gw.stats();
  await emu.fault({ kind: 'status', status: 503, every: 2, for_ms: 10_500 });
  const answers = await paced(50, 10_000, () => ask(gw.url('/agent/lists'), gw.token, began));
  const calls = (await emu.calls()) - before;
  const statsAfter = await gw.stats();
  await emu.clearFaults();
  const extra = calls - answers.length;
  return [
    '3. Retries under 50 % injected failures (503 without Retry-After, 50 uncached reads/s for 10 s)',
    `   gateway requests ${answers.length}, platform calls ${calls}: extra ${extra} = ${pct(extra, answers.length)} of requests (retries counted by the gateway: ${(statsAfter.upstream_retries ?? 0) - (statsBefore.upstream_retries ?? 0)})`,
    `   answered with success: ${pct(answers.filter(ok).length, answers.length)} (50 % without retries)`,
  ];
}

/** 4: 1,000 session.create calls, each sent twice, every other first answer lost. */
async function idempotency(bundle: GatewayBundle, emu: Emulator): Promise<string[]> {
  // Half the writes losing their connection would open the breaker (then writes are refused,
  // not sent, and their keys released); this scenario measures the keys, so it stays closed.
  const gw = await gateway(bundle, emu, { CIRCUIT_FAILURES: '1000', CIRCUIT_FAILURE_RATIO: '2' });
  const began = performance.now();
  const teams = await ask(gw.url('/team/lists?team_type=user'), gw.token, began);
  const teamId = (JSON.parse(teams.body) as { data: { data: { team_id: string }[] } }).data.data[0]
    ?.team_id;
  const before = (await emu.stats()).sessions;
  await emu.fault({ kind: 'lost_answer', path: '/session/create', every: 2, for_ms: 600_000 });
  const keys = Array.from({ length: 1000 }, (_, i) => `chaos-${i}-${crypto.randomUUID()}`);
  const create = (key: string) =>
    ask(gw.url('/session/create'), gw.token, began, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ team_id: teamId, task: `chaos ${key}` }),
    });
  const firsts = await pool(keys, 16, create);
  const repeats = await pool(keys, 16, create);
  await emu.clearFaults();
  const made = (await emu.stats()).sessions - before;
  const lost = firsts.filter((a) => a.status === 502).length;
  const outcomes = new Map<string, number>();
  for (const a of firsts) {
    const k = `${a.status}/${a.code}`;
    outcomes.set(k, (outcomes.get(k) ?? 0) + 1);
  }
  const same = repeats.filter(
    (r, i) => r.replayed && r.status === firsts[i]?.status && r.body === firsts[i]?.body,
  ).length;
  return [
    '4. Idempotency: 1,000 session.create calls with an Idempotency-Key, each sent twice, every other first answer lost upstream',
    `   first calls: ${firsts.filter(ok).length} answered, ${lost} lost (502 after the platform acted); sessions made upstream: ${made} (CIRCUIT_FAILURES=1000, ratio off)`,
    `   first calls by status/code: ${[...outcomes].map(([k, n]) => `${k} ×${n}`).join(', ')}`,
    `   repeats that got the first answer back (Idempotent-Replayed: true, same status and body): ${same} of ${repeats.length}`,
  ];
}

async function main(): Promise<number> {
  const began = performance.now();
  console.log('== building the gateway: wrangler deploy --dry-run');
  const bundle = await buildGatewayBundle();
  const emulator = await startEmulator({ port: 0 });
  const emu = emulatorControl(emulator.url);
  const report: string[] = [];
  try {
    for (const [name, scenario] of [
      ['outage', outage],
      ['storm', storm],
      ['flaky', flaky],
      ['idempotency', idempotency],
    ] as const) {
      console.log(`== ${name}`);
      report.push(...(await scenario(bundle, emu)), '');
      await emu.clearFaults();
    }
    const warnings = hosts.flatMap((h) =>
      h.logs().filter((l) => /warn|error/i.test(l.level) && !l.message.startsWith('{')),
    );
    const cut = warnings.filter((l) => /Network connection lost/.test(l.message)).length;
    report.push(
      `workerd lines at warn/error level other than the gateway's own JSON log: ${warnings.length}` +
        ` (${cut} "Network connection lost": workerd's note of each connection the emulator cut)`,
    );
    if (process.env.CHAOS_VERBOSE) {
      for (const l of warnings.slice(0, 20))
        report.push(`  ${l.level}: ${l.message.slice(0, 200)}`);
    }
  } finally {
    await Promise.allSettled(hosts.map((h) => h.stop()));
    await emulator.close();
    bundle.remove();
  }
  console.log(`\n${report.join('\n')}`);
  console.log(`chaos took ${((performance.now() - began) / 1000).toFixed(1)} s`);
  return 0;
}

process.exit(await main());
