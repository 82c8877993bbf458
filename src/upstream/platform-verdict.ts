/**
 * Whether failures are the platform's own, not a few tenants' (docs/RESILIENCE.md,
 * "One key's trouble stays its own"). A tenant's own data, body or account can
 * make every one of its calls fail while the platform serves everyone else, so
 * keys that fail prove nothing while another key's call succeeds. Counted
 * since the last call the platform answered (any key's success forgets it
 * all), within the breaker's window; the failures are the platform's when:
 * - keys that were working stop: MIN_SEVERAL_KEYS keys that had been answered
 *   before have had their own breakers open; or
 * - every call fails: the last `minCalls` calls, from MIN_SEVERAL_KEYS keys
 *   or more, all failed.
 * A 503 with Retry-After from MIN_SEVERAL_KEYS keys, with no call answered
 * between, is the platform asking everyone to back off.
 */
import type { KeyHealth } from './key-health';
import { DistinctKeys, MIN_SEVERAL_KEYS, RecentCalls } from './several-keys';

export class PlatformVerdict {
  /** Keys that failed since the last call answered. */
  private readonly failing: DistinctKeys;
  /** Of them, keys that had been answered before and whose own breaker opened. */
  private readonly stopped: DistinctKeys;
  /** Keys a 503 with Retry-After asked to pause since the last call answered. */
  private readonly paused: DistinctKeys;
  /** Calls failed since the last call answered. */
  private readonly failedCalls: RecentCalls;

  constructor(
    windowMs: number,
    private readonly minCalls: number,
  ) {
    this.failing = new DistinctKeys(windowMs);
    this.stopped = new DistinctKeys(windowMs);
    this.paused = new DistinctKeys(windowMs);
    this.failedCalls = new RecentCalls(windowMs);
  }

  /** The platform answered a call (of any key): what failed before it counts no more. */
  answered(): void {
    this.failing.forget();
    this.stopped.forget();
    this.paused.forget();
    this.failedCalls.forget();
  }

  /** A call of this key failed (`opened`: its own breaker opened); true when it is the platform's. */
  failed(key: KeyHealth, opened: boolean, now: number): boolean {
    this.failedCalls.add(now);
    key.failingIn = this.failing.note(key.failingIn, now);
    if (opened && key.answeredOnce) key.stoppedIn = this.stopped.note(key.stoppedIn, now);
    const keysStopped = this.stopped.count(now) >= MIN_SEVERAL_KEYS;
    const everyCallFails =
      this.failedCalls.count(now) >= this.minCalls && this.failing.count(now) >= MIN_SEVERAL_KEYS;
    return keysStopped || everyCallFails;
  }

  /** A 503 with Retry-After asked this key to pause; true when enough keys were asked to. */
  backoff(key: KeyHealth, now: number): boolean {
    key.pausedIn = this.paused.note(key.pausedIn, now);
    if (this.paused.count(now) < MIN_SEVERAL_KEYS) return false;
    this.paused.forget();
    return true;
  }
}
