/**
 * The load generator (./load.ts) on a thread of its own. Miniflare reads
 * every line workerd prints on the bench's main thread; a client sharing that
 * event loop would wait behind it, which lowers the measured throughput of
 * whichever Worker logs the most, for reasons that are not the Worker's. The
 * CPU is still shared, as on any one machine.
 *
 * This module is both sides: `LoadThread` on the main thread, and the worker
 * that runs the rounds (with one keep-alive agent per target) on the other.
 */
import { isMainThread, parentPort, Worker } from 'node:worker_threads';
import { keepAliveAgent, type RoundOptions, type RoundResult, runRound, type Target } from './load';

/** A target as the thread gets it: where to send, and a key for its keep-alive agent. */
export interface ThreadTarget extends Omit<Target, 'agent' | 'url'> {
  key: string;
  url: string;
}

interface RoundRequest {
  id: number;
  target: ThreadTarget;
  opts: RoundOptions;
}

type RoundReply = { id: number; result: RoundResult } | { id: number; error: string };

export class LoadThread {
  private readonly worker = new Worker(new URL(import.meta.url));
  private readonly pending = new Map<number, (reply: RoundReply) => void>();
  private nextId = 0;
  /** Why the thread stopped, once it has: later rounds fail at once instead of waiting forever. */
  private stopped: string | null = null;

  constructor() {
    this.worker.on('message', (reply: RoundReply) => {
      this.pending.get(reply.id)?.(reply);
      this.pending.delete(reply.id);
    });
    const stop = (why: string) => {
      this.stopped ??= why;
      for (const [id, settle] of this.pending) settle({ id, error: why });
      this.pending.clear();
    };
    this.worker.on('error', (err) => stop(`load thread failed: ${err}`));
    this.worker.on('exit', (code) => stop(`load thread exited (code ${code})`));
  }

  round(target: ThreadTarget, opts: RoundOptions): Promise<RoundResult> {
    if (this.stopped) return Promise.reject(new Error(this.stopped));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, (reply) =>
        'result' in reply ? resolve(reply.result) : reject(new Error(reply.error)),
      );
      this.worker.postMessage({ id, target, opts } satisfies RoundRequest);
    });
  }

  /** Closes every keep-alive connection and stops the thread. */
  async close(): Promise<void> {
    await this.worker.terminate();
  }
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  const agents = new Map<string, ReturnType<typeof keepAliveAgent>>();
  port.on('message', async ({ id, target, opts }: RoundRequest) => {
    try {
      let agent = agents.get(target.key);
      if (!agent) {
        agent = keepAliveAgent(opts.concurrency);
        agents.set(target.key, agent);
      }
      const result = await runRound({ ...target, url: new URL(target.url), agent }, opts);
      port.postMessage({ id, result } satisfies RoundReply);
    } catch (err) {
      port.postMessage({ id, error: String(err) } satisfies RoundReply);
    }
  });
}
