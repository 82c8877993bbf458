/**
 * How many retries an isolate may make (docs/RESILIENCE.md): at most `ratio`
 * of the calls of the last `windowMs`, or `minPerSecond` over the window
 * when that is more (quiet times). When the platform fails, retries then add
 * at most a tenth to a busy isolate's load, never multiply it. Time is
 * passed in.
 */

const BUCKET_MS = 1000;

export interface RetryBudgetOptions {
  ratio: number;
  minPerSecond: number;
  windowMs: number;
}

export class RetryBudget {
  private buckets: { at: number; calls: number; retries: number }[] = [];

  constructor(readonly options: RetryBudgetOptions) {}

  /** A first attempt: it earns retry room. */
  noteCall(now: number): void {
    this.bucket(now).calls++;
  }

  /** Takes one retry from the budget if there is room. */
  tryRetry(now: number): boolean {
    const current = this.bucket(now);
    let calls = 0;
    let retries = 0;
    for (const b of this.buckets) {
      calls += b.calls;
      retries += b.retries;
    }
    const reserve = (this.options.minPerSecond * this.options.windowMs) / 1000;
    if (retries + 1 > Math.max(calls * this.options.ratio, reserve)) return false;
    current.retries++;
    return true;
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
