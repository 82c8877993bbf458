/**
 * `npm run bench:rpc`: what a call on a part of a Durable Object costs, by the way the
 * part is reached (docs/ARCHITECTURE.md, "The tenant's guard, in parts"). A probe Worker
 * (./rpc-worker.ts) on plain workerd makes `--calls` calls of each kind in a row within
 * one request, to a probe object with one small part: a method of the object itself
 * (`direct`, one round trip); a call the object routes to the part by name (`routed`,
 * one round trip: how the TenantGuard takes calls); a call on the part as an RpcTarget,
 * pipelined on its stub before that has come back (`pipelined`, one round trip) or made
 * once it has (`awaited`, two); and to the gateway's own TenantGuard through
 * `guardFor` (a read, an exact-mode lease call). Caller and objects share one workerd,
 * so a round trip is a hop through its event loop, not a network's wait: the wall time
 * is the work, and the workerd process's CPU per call (from /proc) says so.
 *
 *   npm run bench:rpc -- --calls 2000 --rounds 7
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { buildSync } from 'esbuild';
import { startScriptWorker } from '../workerd-host';
import { cpuMs, pidListeningOn } from './cpu';
import { median } from './load';
import { fmt } from './util';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '5' },
  },
});
const CALLS = Number(values.calls);
const ROUNDS = Number(values.rounds);

async function main(): Promise<void> {
  const script = buildSync({
    entryPoints: [new URL('./rpc-worker.ts', import.meta.url).pathname],
    bundle: true,
    format: 'esm',
    external: ['cloudflare:workers'],
    write: false,
    logLevel: 'warning',
  }).outputFiles[0]!.text;
  const host = await startScriptWorker(
    script,
    {},
    {
      durableObjects: {
        TENANT_GUARD: { className: 'TenantGuard', useSQLite: true },
        PROBE: { className: 'Probe', useSQLite: true },
      },
    },
  );
  try {
    const pid = pidListeningOn(Number(new URL(host.url).port));
    const kinds = (await (await fetch(host.url)).json()) as string[];
    const run = async (kind: string, calls: number) => {
      const res = await fetch(`${host.url}/${kind}?n=${calls}`);
      if (!res.ok) throw new Error(`${kind}: ${res.status} ${await res.text()}`);
    };
    const rows = new Map<string, { wall: number; cpu: number }>();
    for (const kind of kinds) await run(kind, Math.ceil(CALLS / 4)); // warm-up
    for (const kind of kinds) {
      const wall: number[] = [];
      const cpu: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const cpuBefore = cpuMs(pid);
        const before = performance.now();
        await run(kind, CALLS);
        wall.push(((performance.now() - before) * 1000) / CALLS);
        const cpuAfter = cpuMs(pid);
        if (cpuBefore !== null && cpuAfter !== null)
          cpu.push(((cpuAfter - cpuBefore) * 1000) / CALLS);
      }
      rows.set(kind, { wall: median(wall), cpu: cpu.length ? median(cpu) : Number.NaN });
    }
    const unit = rows.get('direct')?.wall ?? Number.NaN;
    console.log(
      `µs per call inside workerd (median of ${ROUNDS} rounds of ${CALLS} calls in one request):`,
    );
    console.log(
      `  ${'kind'.padEnd(14)} ${'wall'.padStart(7)} ${'× direct'.padStart(9)} ${'CPU'.padStart(7)}`,
    );
    for (const [kind, r] of rows) {
      const ratio = fmt(r.wall / unit, 2).padStart(9);
      console.log(
        `  ${kind.padEnd(14)} ${fmt(r.wall, 1).padStart(7)} ${ratio} ${fmt(r.cpu, 1).padStart(7)}`,
      );
    }
  } finally {
    await host.stop();
  }
}

await main();
