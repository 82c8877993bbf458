/**
 * What the failure state of one platform key costs in an isolate's memory
 * (docs/RESILIENCE.md, "What tenants share"): 100,000 keys' KeyHealth in a
 * KeyTable, as upstream-health.ts keeps them, each with its breaker opened,
 * a probe out, a pause and a retry counted, measured as heap growth in this
 * Node process. The fingerprints themselves are made before measuring: the
 * table shares them with the tenants' records.
 */

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { KeyHealth, KeyTable } from '../../src/upstream/key-health';

const KEYS = 100_000;

export function bytesPerKey(): number {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const breaker = {
    consecutiveFailures: 5,
    failureRatio: 0.8,
    windowMs: 10_000,
    minCalls: 20,
    cooldownMs: 5000,
    probeTimeoutMs: 30_000,
  };
  const retry = { ratio: 0.1, minPerSecond: 1, windowMs: 10_000 };
  const fingerprints = Array.from({ length: KEYS }, (_, i) => i.toString(16).padStart(64, '0'));
  gc();
  const before = process.memoryUsage().heapUsed;
  const table = new KeyTable(() => new KeyHealth(breaker, retry), KEYS);
  const now = Date.now();
  for (const fp of fingerprints) {
    const key = table.use(fp);
    key.budget.noteCall(now);
    key.budget.spend(now);
    for (let i = 0; i < 5; i++) key.failure(now + i);
    key.permit(now + 6000);
    key.pause('backoff', now + 60_000);
    key.failingIn = key.stoppedIn = key.pausedIn = 1;
    key.lastFailed = key.answeredOnce = true;
  }
  gc();
  const bytes = (process.memoryUsage().heapUsed - before) / KEYS;
  // Both still in use here, so neither was collected before the second reading.
  if (table.size !== fingerprints.length) throw new Error('the table lost keys');
  return bytes;
}
