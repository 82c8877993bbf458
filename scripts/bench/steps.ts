/**
 * `npm run bench:steps`: Worker CPU per call of single steps of the gateway (the secret
 * look, the answer's parse, the cache key, one log line, …) inside plain workerd. A probe
 * Worker (./steps-worker.ts) runs a step `--calls` times within one request; the workerd
 * process's CPU from /proc, divided by the calls, is the step's cost, free of the HTTP
 * noise that hides changes under about 5 % in `bench:profile --base` (BENCHMARKS.md).
 *
 *   npm run bench:steps -- --calls 20000 --rounds 5
 */
import { parseArgs } from 'node:util';
import { buildSync } from 'esbuild';
import { DEMO_PLATFORM_KEY } from '../../emulator/seed';
import { startScriptWorker } from '../workerd-host';
import { cpuMs, pidListeningOn } from './cpu';
import { median } from './load';
import { fmt } from './util';
import { startEmulatorProcess } from './workerd';

const { values } = parseArgs({
  options: {
    calls: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '5' },
  },
});
const CALLS = Number(values.calls);
const ROUNDS = Number(values.rounds);

/** The platform's answer to GET /team/lists for the demo key: the bench's 23 KB answer. */
async function platformAnswer(): Promise<string> {
  const emulator = await startEmulatorProcess(0);
  try {
    const res = await fetch(`${emulator.url}/team/lists`, {
      headers: { authorization: `Bearer ${DEMO_PLATFORM_KEY}` },
    });
    return await res.text();
  } finally {
    await emulator.stop();
  }
}

async function main(): Promise<void> {
  const answer = await platformAnswer();
  const script = buildSync({
    entryPoints: [new URL('./steps-worker.ts', import.meta.url).pathname],
    bundle: true,
    format: 'esm',
    write: false,
    logLevel: 'warning',
  }).outputFiles[0]!.text;
  const host = await startScriptWorker(script, { ANSWER: answer, TENANT_KEY: DEMO_PLATFORM_KEY });
  try {
    const pid = pidListeningOn(Number(new URL(host.url).port));
    if (pid === null) throw new Error('no workerd process found for the probe Worker');
    const names = (await (await fetch(host.url)).json()) as string[];
    const run = async (name: string, calls: number) => {
      const res = await fetch(`${host.url}/${encodeURIComponent(name)}?n=${calls}`);
      if (!res.ok) throw new Error(`step "${name}": ${res.status} ${await res.text()}`);
    };
    console.log(
      `Worker CPU µs per call inside workerd (median of ${ROUNDS} rounds of ${CALLS} calls in one request; the answer is ${answer.length} bytes):`,
    );
    for (const name of names) {
      await run(name, Math.ceil(CALLS / 4)); // warm-up: the JIT's and the regex engine's tiers
      const perCall: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const before = cpuMs(pid)!;
        await run(name, CALLS);
        perCall.push(((cpuMs(pid)! - before) * 1000) / CALLS);
      }
      const range = `${fmt(Math.min(...perCall), 1)}–${fmt(Math.max(...perCall), 1)}`;
      console.log(`  ${name.padEnd(30)} ${fmt(median(perCall), 1).padStart(6)}  (${range})`);
    }
  } finally {
    await host.stop();
  }
}

await main();
