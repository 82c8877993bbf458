/**
 * `npm run bench`: the gateway on plain workerd (miniflare) next to a bare
 * forwarding Worker, see scripts/bench/workerd.ts and BENCHMARKS.md.
 *
 *   npm run bench                          # the default run (a few minutes)
 *   npm run bench -- --rounds 3 --requests 500 --latency 0,20 --concurrency 16 --via entry
 *   npm run bench -- --only gateway-miss,gateway-hit   # a subset, next to the bare Worker
 *   BENCH_VERBOSE=1 npm run bench          # also echo workerd's and the emulator's output
 */
import { parseArgs } from 'node:util';
import { DEFAULT_CONFIG, runWorkerdBench, type WorkerdBenchConfig } from './bench/workerd';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string' },
    requests: { type: 'string' },
    warmup: { type: 'string' },
    concurrency: { type: 'string' },
    latency: { type: 'string' },
    via: { type: 'string' },
    only: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

if (values.help) {
  console.log(`npm run bench [-- options]

  --rounds N          rounds per scenario (default ${DEFAULT_CONFIG.rounds})
  --requests N        requests per scenario and round (default ${DEFAULT_CONFIG.requestsPerRound})
  --warmup N          warm-up requests per scenario (default ${DEFAULT_CONFIG.warmupRequests})
  --concurrency N     requests in flight per scenario (default ${DEFAULT_CONFIG.concurrency})
  --latency A,B,…     one upstream run per value: ms added to each emulator answer (default ${DEFAULT_CONFIG.latenciesMs.join(',')})
  --via direct|entry  requests reach each Worker on a workerd socket of its own (default), or
                      through Miniflare's entry Worker (one more hop, as dispatchFetch and wrangler dev)
  --only A,B,…        run only these scenarios (the bare Worker and the checking floor always run), e.g. gateway-miss,gateway-hit`);
  process.exit(0);
}

const positive = (name: string, value: string | undefined, fallback: number): number => {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`);
  return n;
};

let exitCode: number;
try {
  const latenciesMs =
    values.latency === undefined
      ? DEFAULT_CONFIG.latenciesMs
      : values.latency.split(',').map((v) => {
          const n = Number(v);
          if (!Number.isFinite(n) || n < 0)
            throw new Error('--latency takes ms values ≥ 0, e.g. 0,20');
          return n;
        });
  const via = values.via ?? DEFAULT_CONFIG.via;
  if (via !== 'direct' && via !== 'entry') throw new Error('--via is direct or entry');
  const config: WorkerdBenchConfig = {
    ...DEFAULT_CONFIG,
    rounds: positive('rounds', values.rounds, DEFAULT_CONFIG.rounds),
    requestsPerRound: positive('requests', values.requests, DEFAULT_CONFIG.requestsPerRound),
    warmupRequests: positive('warmup', values.warmup, DEFAULT_CONFIG.warmupRequests),
    concurrency: positive('concurrency', values.concurrency, DEFAULT_CONFIG.concurrency),
    latenciesMs,
    via,
    ...(values.only ? { only: values.only.split(',').map((name) => name.trim()) } : {}),
  };
  exitCode = await runWorkerdBench(config);
} catch (err) {
  console.error(`bench failed: ${(err as Error).stack ?? err}`);
  exitCode = 1;
}
process.exit(exitCode);
