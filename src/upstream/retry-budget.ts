/**
 * How many retries an upstream's calls may make in an isolate
 * (docs/RESILIENCE.md): at most `ratio` of the calls of the last `windowMs`,
 * or `minPerSecond` over the window when that is more (quiet times). When
 * the platform fails, retries then add at most a tenth to a busy isolate's
 * load, never multiply it. This is the ceiling every platform key's own
 * budget (key-health.ts) is under, counted per second so that the tenth
 * holds over any window. Time is passed in.
 */

const BUCKET_MS = 1000;

export interface RetryBudgetOptions {
  ratio: number;
  minPerSecond: number;
  windowMs: number;
}

/** Whether one more retry fits among `retries` already made for `calls` calls. */
export function retryFits(calls: number, retries: number, options: RetryBudgetOptions): boolean {
  const reserve = (options.minPerSecond * options.windowMs) / 1000;
  return retries + 1 <= Math.max(calls * options.ratio, reserve);
}

export class RetryBudget {
  private buckets: { at: number; calls: number; retries: number }[] = [];

  constructor(readonly options: RetryBudgetOptions) {}

  /** A first attempt: it earns retry room. */
  noteCall(now: number): void {
    this.bucket(now).calls++;
  }

  /** Whether one more retry fits now. */
  hasRoom(now: number): boolean {
    this.bucket(now);
    let calls = 0;
    let retries = 0;
    for (const b of this.buckets) {
      calls += b.calls;
      retries += b.retries;
    }
    return retryFits(calls, retries, this.options);
  }

  /** Takes one retry (after hasRoom said yes). */
  spend(now: number): void {
    this.bucket(now).retries++;
  }

  private bucket(now: number) {
    const at = now - (now % BUCKET_MS);
    const since = now - this.options.windowMs;
    while (this.buckets.length > 0 && (this.buckets[0]?.at ?? now) + BUCKET_MS <= since) {
      this.buckets.shift();
    }
    let last = this.buckets.at(-1);
    if (!last || last.at !== at) {
      last = { at, calls: 0, retries: 0 };
      this.buckets.push(last);
    }
    return last;
  }
}
