/**
 * One upstream read per key at a time in an isolate. The first request for a
 * key (the leader) does the work; concurrent ones (followers) wait on their
 * own timers and then take the leader's result as plain data (waiters.ts).
 * The leader's work is kept alive with waitUntil, so followers get an answer
 * even if the leader's own client goes away; a follower that waits too long
 * does the work itself.
 */
import { waitUntilDone } from '../waiters';

/** What followers get: the result, or the error, as plain data. */
export type Shared<T> = { ok: true; value: T } | { ok: false; error: unknown };

interface Flight<T> {
  done: boolean;
  outcome?: Shared<T>;
}

export class Coalescer<T> {
  private readonly flights = new Map<string, Flight<T>>();

  /** Whether a read of this key is under way. */
  running(key: string): boolean {
    return this.flights.has(key);
  }

  /**
   * `work()` once for concurrent callers of one key. `keepAlive` is the
   * caller's waitUntil; followers give up after `followerTimeoutMs`.
   */
  async run(
    key: string,
    work: () => Promise<T>,
    keepAlive: (p: Promise<unknown>) => void,
    followerTimeoutMs: number,
  ): Promise<T> {
    const flight = this.flights.get(key);
    if (flight) {
      const answered = await waitUntilDone(() => flight.done, followerTimeoutMs);
      if (answered && flight.outcome) return unwrap(flight.outcome);
      return work();
    }
    const mine: Flight<T> = { done: false };
    this.flights.set(key, mine);
    const settled = work().then(
      (value): Shared<T> => ({ ok: true, value }),
      (error: unknown): Shared<T> => ({ ok: false, error }),
    );
    const finished = settled.then((outcome) => {
      mine.outcome = outcome;
      mine.done = true;
      if (this.flights.get(key) === mine) this.flights.delete(key);
      return outcome;
    });
    keepAlive(finished);
    return unwrap(await finished);
  }
}

function unwrap<T>(outcome: Shared<T>): T {
  if (outcome.ok) return outcome.value;
  throw outcome.error;
}
