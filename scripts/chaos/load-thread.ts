/**
 * A planned load replayed on a thread of its own, for the noisy-neighbour
 * runs (noisy.ts). On the main thread the emulator makes its huge and slow
 * bodies and Miniflare reads every line workerd prints; a client sharing that
 * event loop would time the healthy tenants' answers late for reasons that
 * are not the gateway's. The noisy tenant gets a thread too, so reading its
 * huge answers does not delay the healthy ones' clocks either. The CPU is
 * still shared, as on any one machine.
 *
 * This module is both sides: `LoadThread` on the main thread, and the worker
 * that replays plans on the other.
 */
import { isMainThread, parentPort, Worker } from 'node:worker_threads';
import { type Answer, ask } from './load';

/** One request of a plan: when (ms after the start), where, as whom, and a tag for the caller. */
export interface Planned {
  at: number;
  url: string;
  token: string;
  tenant: number;
  cached: boolean;
}

export type Replayed = Answer & Pick<Planned, 'tenant' | 'cached'>;

interface Job {
  id: number;
  plan: Planned[];
  /** Date.now() at which the plan starts, so that two threads start together. */
  startAt: number;
}

export class LoadThread {
  private readonly worker = new Worker(new URL(import.meta.url));
  private readonly pending = new Map<number, (answers: Replayed[]) => void>();
  private nextId = 0;

  constructor() {
    this.worker.on('message', ({ id, answers }: { id: number; answers: Replayed[] }) => {
      this.pending.get(id)?.(answers);
      this.pending.delete(id);
    });
    this.worker.on('error', (err) => {
      throw err;
    });
  }

  /** Sends each request of the plan at its time from `startAt`; every answer, without bodies. */
  replay(plan: Planned[], startAt: number): Promise<Replayed[]> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      this.worker.postMessage({ id, plan, startAt } satisfies Job);
    });
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  port.on('message', async ({ id, plan, startAt }: Job) => {
    await sleepUntil(startAt);
    const began = performance.now();
    const pending: Promise<Replayed>[] = [];
    for (const p of plan) {
      const wait = began + p.at - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      pending.push(
        ask(p.url, p.token, began).then(({ body: _, replayed: __, ...a }) => ({
          ...a,
          tenant: p.tenant,
          cached: p.cached,
        })),
      );
    }
    port.postMessage({ id, answers: await Promise.all(pending) });
  });
}

function sleepUntil(at: number): Promise<void> {
  return new Promise((r) => setTimeout(r, Math.max(0, at - Date.now())));
}
