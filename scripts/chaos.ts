/**
 * `npm run chaos`: the gateway on plain workerd (the `miniflare` package, as
 * `npm run bench` runs it) in front of the emulator, on loopback, while the
 * emulator fails in the ways of issues 23 and 30; prints the figures
 * docs/RESILIENCE.md promises (one run is in BENCHMARKS.md). Each scenario
 * runs on a gateway of its own (a fresh isolate), about four minutes in all:
 *
 * 1. a 20 s outage (every connection cut) under steady load of cached and
 *    uncached reads from 20 tenants on 20 platform keys;
 * 2. a 503 storm with `Retry-After: 5`, 20 tenants on 20 keys;
 * 3. 50 % of platform answers a 503 without Retry-After, for 10 s;
 * 4. 1,000 `session.create` calls with an Idempotency-Key, each sent twice,
 *    the platform's answer to every other first call lost after it acted;
 * 5. noisy neighbours: 20 tenants on 20 keys, one key misbehaving in one way
 *    at a time (scripts/chaos/noisy.ts), against a quiet run;
 * and what one platform key's failure state costs in memory.
 *
 *   npm run chaos
 *   CHAOS_VERBOSE=1 npm run chaos    # print up to 50 of workerd's warnings, not 5
 *   CHAOS_ONLY=outage,noisy npm run chaos   # only these (outage, storm, flaky, idempotency, noisy)
 *   CHAOS_ONLY=noisy CHAOS_ROUNDS=3 npm run chaos   # the noisy-neighbour list three times, medians
 *   CHAOS_ONLY=noisy CHAOS_NOISY_ONLY=huge npm run chaos   # only the huge-answer runs (and quiet, and the control)
 */

import { startEmulator } from '../emulator/server';
import { counter, gateway, hosts, platformKeys } from './chaos/gateway';
import { bytesPerKey } from './chaos/key-memory';
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
import { noisyNeighbours } from './chaos/noisy';
import { buildGatewayBundle, type GatewayBundle } from './workerd-host';

const CODE = { unavailable: 50301, backingOff: 50302 };
/** Tenants (each on a platform key of its own) in the outage, storm and noisy-neighbour runs. */
const TENANTS = 20;

const pct = (part: number, whole: number) =>
  whole === 0 ? 'n/a' : `${((100 * part) / whole).toFixed(1)} %`;
const ms = (v: number) => (Number.isNaN(v) ? 'n/a' : `${v.toFixed(1)} ms`);
const ok = (a: Answer) => a.status === 200 && a.code === 0;
const secondsAfter = (a: Answer | undefined, t: number) =>
  a ? ((a.at - t) / 1000).toFixed(2) : 'n/a';

/** 1: a 20 s outage under steady load, 20 tenants on 20 keys. */
async function outage(bundle: GatewayBundle, emu: Emulator, keys: string[]): Promise<string[]> {
  // team.list fresh 2 s, then 2 s of grace: during the outage it can only be answered stale.
  const gw = await gateway(
    bundle,
    emu,
    {
      // Every request logged, to count the lines that say stale_reason.
      LOG_SAMPLE_RATE: '1',
      ROUTE_OVERRIDES: JSON.stringify({
        'team.list': { cache: { ttl_s: 2, grace_s: 2, stale_if_error_s: 86_400 } },
      }),
    },
    keys,
  );
  const OUTAGE_AT = 5_000;
  const OUTAGE_MS = 20_000;
  const TOTAL = 35_000;
  const n = keys.length;
  const began = performance.now();
  let callsAtStart = 0;
  let callsAtEnd = 0;
  let statsAtStart: Record<string, unknown> = {};
  let statsAtEnd: Record<string, unknown> = {};
  const timeline = (async () => {
    await sleep(OUTAGE_AT);
    callsAtStart = await emu.calls();
    statsAtStart = await gw.stats();
    await emu.fault({ kind: 'reset', for_ms: OUTAGE_MS });
    await sleep(OUTAGE_MS);
    callsAtEnd = await emu.calls();
    statsAtEnd = await gw.stats();
  })();
  const token = (i: number) => gw.tokens[i % n] ?? '';
  const [cached, uncached] = await Promise.all([
    paced(20, TOTAL, (i) => ask(gw.url(`/team/lists?page_size=${(i % 4) + 1}`), token(i), began)),
    paced(20, TOTAL, (i) => ask(gw.url('/agent/lists'), token(i), began)),
  ]);
  await timeline;
  await gw.stop();
  const during = (a: Answer) => a.at >= OUTAGE_AT + 100 && a.at < OUTAGE_AT + OUTAGE_MS;
  const cachedDuring = cached.filter(during);
  const staleDuring = cachedDuring.filter((a) => ok(a) && a.xCache === 'STALE');
  const firstRefused = uncached.find((a) => during(a) && a.code === CODE.unavailable);
  const firstOpen = uncached.find(
    (a) => during(a) && a.code === CODE.unavailable && a.scope === 'upstream',
  );
  const breakers = (statsAtEnd.breakers ?? {}) as Record<
    string,
    { keys_open: number; keys_half_open: number }
  >;
  const atEnd = breakers[emu.url];
  // Past their cool-down, keys' breakers read half-open; their probes wait for the upstream's.
  const keysOpen = atEnd ? atEnd.keys_open + atEnd.keys_half_open : 'n/a';
  const afterOpen = uncached.filter((a) => during(a) && firstOpen && a.at > firstOpen.at);
  const refusedFast = afterOpen.filter((a) => a.code === CODE.unavailable);
  const fast = refusedFast.map((a) => a.ms);
  const ended = OUTAGE_AT + OUTAGE_MS;
  const after = uncached.filter((a) => a.at >= ended);
  const lastBad = [...after].reverse().find((a) => !ok(a));
  const firstGood = after.find(ok);
  const retries =
    counter(statsAtEnd, 'upstream_retries') - counter(statsAtStart, 'upstream_retries');
  const platformCalls = callsAtEnd - callsAtStart;
  const requests = cachedDuring.length + uncached.filter(during).length;
  const staleLogged = gw.host
    .logs()
    .filter((l) => /"stale_reason":"(unreachable|breaker_open)"/.test(l.message)).length;
  return [
    `1. A 20 s platform outage (every connection cut) under steady load: 20 cached + 20 uncached reads/s from ${n} tenants on ${n} platform keys`,
    `   cached reads answered during the outage: ${pct(cachedDuring.filter(ok).length, cachedDuring.length)} of ${cachedDuring.length} (stale: ${staleDuring.length}, with X-Stale-Reason; ${staleLogged} request log lines say stale_reason)`,
    `   first uncached call refused at once (50301) after ${secondsAfter(firstRefused, OUTAGE_AT)} s; the upstream breaker open after ${secondsAfter(firstOpen, OUTAGE_AT)} s (keys' breakers open or half-open at the end: ${keysOpen} of ${n}); uncached calls after that: ${afterOpen.length}, answered 50301 at once: ${pct(refusedFast.length, afterOpen.length)}, p50 ${ms(percentile(fast, 50))}, p95 ${ms(percentile(fast, 95))}, max ${ms(Math.max(...fast))}`,
    `   platform calls during the 20 s: ${platformCalls} (of ${requests} gateway requests): retries ${retries} = ${pct(retries, requests)} of the requests, the rest first calls before the breakers opened and probes`,
    `   back to normal after the platform returned: first uncached success after ${firstGood ? ((firstGood.at - ended) / 1000).toFixed(2) : 'n/a'} s, all successes from ${lastBad ? ((lastBad.at - ended) / 1000).toFixed(2) : '0.00'} s`,
  ];
}

/** 2: a 503 storm with Retry-After: 5, 20 tenants on 20 keys. */
async function storm(bundle: GatewayBundle, emu: Emulator, keys: string[]): Promise<string[]> {
  const gw = await gateway(bundle, emu, {}, keys);
  const n = keys.length;
  const began = performance.now();
  let during = 0;
  const timeline = (async () => {
    await sleep(2000);
    // For those 5 s the platform answers every call with 503 and Retry-After: 5.
    await emu.fault({ kind: 'status', status: 503, retry_after: 5, for_ms: 5000 });
    // By 200 ms in, the first calls (20/s) have had their 503s: from then on until the pause
    // ends, a platform call is one the gateway should not have made once several keys heard it.
    await sleep(200);
    const before = await emu.calls();
    await sleep(4800);
    during = (await emu.calls()) - before;
  })();
  const answers = await paced(20, 12_000, (i) =>
    ask(gw.url('/agent/lists'), gw.tokens[i % n] ?? '', began),
  );
  await timeline;
  await gw.stop();
  const passed = answers.filter((a) => a.code === CODE.backingOff && !a.held);
  const held = answers.filter((a) => a.code === CODE.backingOff && a.held);
  const heldBy = (scope: string) => held.filter((a) => a.scope === scope).length;
  const stormAt = passed[0]?.at ?? Number.NaN;
  const upstreamHeld = held.find((a) => a.scope === 'upstream');
  const resumed = answers.find((a) => a.at > stormAt && ok(a));
  return [
    `2. A platform 503 storm with Retry-After: 5 (20 uncached reads/s from ${n} tenants on ${n} keys, one isolate)`,
    `   503s passed on with Retry-After: ${passed.length} (one per key until several keys had one); the upstream held after ${secondsAfter(upstreamHeld, stormAt)} s; held and answered at once: ${held.length} (${heldBy('key')} by their key's pause, ${heldBy('upstream')} by the upstream's), p95 ${ms(
      percentile(
        held.map((a) => a.ms),
        95,
      ),
    )}`,
    `   platform calls from 0.2 s to 5 s into the storm: ${during}`,
    `   first success after the first 503: ${resumed ? ((resumed.at - stormAt) / 1000).toFixed(2) : 'n/a'} s (the pause asked for: 5 s)`,
  ];
}

/** 3: half the platform's answers are a 503 without Retry-After. */
async function flaky(bundle: GatewayBundle, emu: Emulator): Promise<string[]> {
  const lines = [
    '3. Retries under 50 % injected failures (503 without Retry-After, 50 uncached reads/s for 10 s)',
  ];
  // First the retry budget alone (breaker off), then the default settings, where the breaker
  // may open when failures come in runs (answers complete out of order under load).
  for (const [label, vars] of [
    ['breaker off', { CIRCUIT_FAILURES: '1000', CIRCUIT_FAILURE_RATIO: '2' }],
    ['default settings', {}],
  ] as const) {
    const gw = await gateway(bundle, emu, vars);
    const began = performance.now();
    const before = await emu.calls();
    const statsBefore = await gw.stats();
    await emu.fault({ kind: 'status', status: 503, every: 2, for_ms: 10_500 });
    const answers = await paced(50, 10_000, () => ask(gw.url('/agent/lists'), gw.token, began));
    const calls = (await emu.calls()) - before;
    const statsAfter = await gw.stats();
    await emu.clearFaults();
    await gw.stop();
    const retries =
      counter(statsAfter, 'upstream_retries') - counter(statsBefore, 'upstream_retries');
    const refused =
      counter(statsAfter, 'breaker_refusals') - counter(statsBefore, 'breaker_refusals');
    lines.push(
      `   ${label}: gateway requests ${answers.length}, platform calls ${calls}, retries ${retries} = ${pct(retries, answers.length)} of requests; answered with success ${pct(answers.filter(ok).length, answers.length)} (50 % without retries); refused by the breaker ${refused}`,
    );
  }
  return lines;
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
  await gw.stop();
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
  const only = process.env.CHAOS_ONLY?.split(',').map((n) => n.trim());
  // Measured first, before anything else fills this process's heap.
  const keyBytes = bytesPerKey();
  console.log('== building the gateway: wrangler deploy --dry-run');
  const bundle = await buildGatewayBundle();
  const emulator = await startEmulator({ port: 0 });
  const emu = emulatorControl(emulator.url);
  const report: string[] = [];
  try {
    const keys = await platformKeys(emu, TENANTS);
    for (const [name, scenario] of [
      ['outage', outage],
      ['storm', storm],
      ['flaky', flaky],
      ['idempotency', idempotency],
      ['noisy', noisyNeighbours],
    ] as const) {
      if (only && !only.includes(name)) continue;
      console.log(`== ${name}`);
      report.push(...(await scenario(bundle, emu, keys)), '');
      await emu.clearFaults();
    }
    report.push(
      `6. One platform key's failure state (breaker, retry budget, pause, in the key table): ${keyBytes.toFixed(0)} bytes, measured over 100,000 keys in Node ${process.version} (the 64-character fingerprint, shared with the tenant's record, not counted)`,
      '',
    );
    const warnings = hosts.flatMap((h) =>
      h.logs().filter((l) => /warn|error/i.test(l.level) && !l.message.startsWith('{')),
    );
    report.push(
      `workerd lines at warn/error level other than the gateway's own JSON log: ${warnings.length}`,
    );
    const shown = process.env.CHAOS_VERBOSE ? 50 : 5;
    for (const l of warnings.slice(0, shown)) {
      report.push(`  ${l.level}: ${l.message.replace(/\s+/g, ' ').slice(0, 160)}`);
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
