/**
 * Waiting for work another request is doing, the way workerd allows: a
 * request never awaits a promise or I/O that another request created (workerd
 * cancels such a waiter once the creator finishes, and logs "different request
 * context"). A waiter sleeps on its own timers and looks at shared plain data
 * until the work is done; nothing crosses between requests but that data.
 *
 * Resolving a waiter-made promise from the working request is the other way;
 * it works on workerd itself but not inside the Workers vitest integration,
 * where the waiter's continuation fails with "Cannot perform I/O on behalf of
 * a different request". Polling works in both, for a few timer wake-ups.
 *
 * @example if (!(await waitUntilDone(() => !work.running, 2000))) doItMyself();
 */

/** First and longest pause between looks, in ms: short while calls are quick, bounded when slow. */
const FIRST_PAUSE_MS = 1;
const LONGEST_PAUSE_MS = 10;

/** Resolves true once `done()` holds, or false after `timeoutMs`. */
export async function waitUntilDone(done: () => boolean, timeoutMs: number): Promise<boolean> {
  let waited = 0;
  let pause = FIRST_PAUSE_MS;
  while (!done()) {
    if (waited >= timeoutMs) return false;
    await new Promise((resolve) => setTimeout(resolve, pause));
    waited += pause;
    pause = Math.min(pause * 2, LONGEST_PAUSE_MS);
  }
  return true;
}

/**
 * Calls that must not overlap take turns, first come first served. A Durable
 * Object's input gates let other calls in while one awaits KV or a fetch, so a
 * call that reads, then writes, needs this to keep others out between the two.
 * Waiters poll (above): no call awaits another's promise.
 */
export class Turns {
  /** Calls waiting, in arrival order: the first one runs next. */
  private readonly waiting: object[] = [];
  private running = false;

  /** Runs `work` once every call before it is done; throws after waiting `timeoutMs`. */
  async run<T>(work: () => Promise<T>, timeoutMs: number): Promise<T> {
    const ticket = {};
    this.waiting.push(ticket);
    // Taking the turn happens in the same synchronous step as seeing it is ours.
    const ours = await waitUntilDone(() => {
      if (this.running || this.waiting[0] !== ticket) return false;
      this.waiting.shift();
      this.running = true;
      return true;
    }, timeoutMs);
    if (!ours) {
      this.waiting.splice(this.waiting.indexOf(ticket), 1);
      throw new Error(`no turn within ${timeoutMs} ms`);
    }
    try {
      return await work();
    } finally {
      this.running = false;
    }
  }
}
