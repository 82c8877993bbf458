/**
 * Simulated time for the fleet simulation: an event queue ordered by time,
 * run one event at a time, with every promise the event settled run to its
 * next wait before time moves on. The gateway's code takes `now()` from here
 * (AdmissionIo.now, the guard's `req.now`), so hours pass in seconds.
 */

interface Event {
  at: number;
  seq: number;
  run: () => void;
}

export class Clock {
  private heap: Event[] = [];
  private seq = 0;
  private time: number;

  constructor(start: number) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  /**
   * Runs `run` at simulated time `at` (never earlier than now). `cancel()` drops it
   * (and what it holds) before then.
   */
  at(at: number, run: () => void): { cancel(): void } {
    const event: Event = { at: Math.max(at, this.time), seq: this.seq++, run };
    this.push(event);
    return { cancel: () => (event.run = noop) };
  }

  after(ms: number, run: () => void): { cancel(): void } {
    return this.at(this.time + ms, run);
  }

  /** A promise that settles `ms` of simulated time from now. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.after(ms, resolve));
  }

  /** Runs events until the queue is empty or the next one is past `until`. */
  async run(until: number): Promise<void> {
    while (this.heap.length > 0 && (this.heap[0]?.at ?? Infinity) <= until) {
      const event = this.pop();
      this.time = event.at;
      event.run();
      // Let every continuation the event released run up to its next wait.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    this.time = Math.max(this.time, until);
  }

  private push(e: Event): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(h[i]!, h[parent]!)) break;
      [h[i], h[parent]] = [h[parent]!, h[i]!];
      i = parent;
    }
  }

  private pop(): Event {
    const h = this.heap;
    const top = h[0]!;
    const last = h.pop()!;
    if (h.length > 0) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l]!, h[m]!)) m = l;
        if (r < h.length && before(h[r]!, h[m]!)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m]!, h[i]!];
        i = m;
      }
    }
    return top;
  }
}

const noop = () => undefined;
const before = (a: Event, b: Event) => a.at < b.at || (a.at === b.at && a.seq < b.seq);
