/**
 * A simulated Durable Object: calls reach it after half a round trip, wait
 * their turn for its one thread (SERVICE_MS each, so about 1,000 calls a
 * second, Cloudflare's documented order for one object), run the project's
 * own code, and answer after the other half. While a call awaits I/O of its
 * own (a broker asking the root), others run, as in workerd. An object with
 * more than MAX_QUEUE_MS of calls waiting refuses the next at once, as an
 * overloaded Durable Object does ("Durable Object is overloaded"): the caller
 * gets an error, and the queue, and the simulation's memory, stay bounded.
 */
import type { Clock } from './clock';

/** Thread time one call takes: ~1,000 calls a second per object. */
export const SERVICE_MS = 1;
/** Work an object queues at most: past it, calls are refused (overloaded). */
export const MAX_QUEUE_MS = 1000;

/** What the caller of an overloaded object gets. */
export class Overloaded extends Error {
  constructor(name: string) {
    super(`Durable Object is overloaded: ${name}`);
  }
}

export class SimObject<T> {
  private busyUntil = 0;
  /** Calls answered, per whole second of simulated time. */
  private readonly perSecond = new Map<number, number>();
  calls = 0;
  /** Calls refused because MAX_QUEUE_MS of work was already waiting. */
  overloaded = 0;

  constructor(
    private readonly clock: Clock,
    readonly core: T,
    readonly name: string,
  ) {}

  /** Calls `method` from a place `rttMs` away; settles when the answer is back there. */
  call<R>(rttMs: number, method: (core: T) => R | Promise<R>): Promise<Awaited<R>> {
    return new Promise((resolve, reject) => {
      this.clock.after(rttMs / 2, () => {
        if (this.busyUntil - this.clock.now() > MAX_QUEUE_MS) {
          this.overloaded++;
          this.clock.after(rttMs / 2, () => reject(new Overloaded(this.name)));
          return;
        }
        const start = Math.max(this.clock.now(), this.busyUntil);
        this.busyUntil = start + SERVICE_MS;
        this.clock.at(start, () => {
          this.calls++;
          const second = Math.floor(start / 1000);
          this.perSecond.set(second, (this.perSecond.get(second) ?? 0) + 1);
          Promise.resolve()
            .then(() => method(this.core))
            .then(
              (value) => this.clock.after(rttMs / 2, () => resolve(value as Awaited<R>)),
              (err) => this.clock.after(rttMs / 2, () => reject(err)),
            );
        });
      });
    });
  }

  /** The most calls it answered in any one second (from `fromMs` on, simulated time). */
  busiestSecond(fromMs = 0): number {
    let most = 0;
    for (const [second, n] of this.perSecond) {
      if (second * 1000 >= fromMs) most = Math.max(most, n);
    }
    return most;
  }
}
