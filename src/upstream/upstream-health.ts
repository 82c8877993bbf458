/**
 * What one isolate knows of one upstream's health (docs/RESILIENCE.md, "One
 * key's trouble stays its own"). Failures, pauses and retries are kept per
 * platform key (key-health.ts): a key's own failures open its own breaker,
 * and a pause the platform asks of it holds that key only. The upstream as a
 * whole is judged only on the platform's own failure (platform-verdict.ts):
 * its breaker opens, or it is held, when failures cannot be a few tenants'
 * own. Even then it holds only keys whose own latest call failed: a key that
 * keeps succeeding always reaches the platform, and the platform answering
 * any key closes the upstream's breaker and ends its hold. Every retry needs
 * room in its key's budget and in the upstream's. Time is passed in; no I/O.
 */
import { type BreakerOptions, CircuitBreaker } from './breaker';
import { KeyHealth, KeyTable, type PauseKind } from './key-health';
import { PlatformVerdict } from './platform-verdict';
import { RetryBudget, type RetryBudgetOptions } from './retry-budget';

export interface ResilienceOptions {
  breaker: BreakerOptions;
  retry: RetryBudgetOptions;
  /** The longest the gateway holds calls on one Retry-After (MAX_PLATFORM_PAUSE_S). */
  maxPauseMs: number;
}

/** Whose state refused a call: the caller's platform key's, or the whole upstream's. */
export type HealthScope = 'key' | 'upstream';

export type HealthRefusal =
  | { refused: 'held'; scope: HealthScope; kind: PauseKind; until: number }
  | { refused: 'open'; scope: HealthScope; retryAfterMs: number };

/** A call let through: its key's state, and whether it is a breaker's probe. */
export interface Ticket {
  allowed: true;
  key: KeyHealth;
  /** The key's breaker's probe. */
  keyProbe: boolean;
  /** The upstream-wide breaker's probe. */
  upstreamProbe: boolean;
}

/** How a call ended, for the state: whether it counts as the platform failing, and any pause. */
export interface Outcome {
  failed: boolean;
  pause?: { kind: PauseKind; seconds: number };
}

/** The upstream's breaker state and its keys' in brief, for GET /admin/stats (never a key). */
export interface HealthSummary {
  state: string;
  held: boolean;
  keys: number;
  keys_open: number;
  keys_half_open: number;
  keys_held: number;
}

/** The upstream's own breaker counts no outcome of its own: only its probe's, and the keys' word. */
const NEVER_BY_COUNT = { consecutiveFailures: Number.POSITIVE_INFINITY, failureRatio: 2 };

export class UpstreamHealth {
  private readonly keys: KeyTable;
  private readonly breaker: CircuitBreaker;
  private heldUntil = 0;
  /** The ceiling every key's retries also need room in. */
  private readonly ceiling: RetryBudget;
  private readonly verdict: PlatformVerdict;

  constructor(readonly options: ResilienceOptions) {
    const { breaker, retry } = options;
    // A key may use half the quiet-time reserve, so one key's retries never take all of it.
    const keyRetry = { ...retry, minPerSecond: retry.minPerSecond / 2 };
    this.keys = new KeyTable(() => new KeyHealth(breaker, keyRetry));
    this.breaker = new CircuitBreaker({ ...breaker, ...NEVER_BY_COUNT });
    this.ceiling = new RetryBudget(retry);
    this.verdict = new PlatformVerdict(breaker.windowMs, breaker.minCalls);
  }

  /** Lets a call with this key through, or says why not. */
  admit(keyId: string, now: number): Ticket | HealthRefusal {
    const key = this.keys.use(keyId);
    const held = this.heldAt(key, now);
    if (held) return held;
    // The upstream-wide breaker holds only a key whose own latest call failed.
    const bound = key.lastFailed;
    // An open upstream refuses before the key's breaker could hand out its probe.
    const upstreamOpen =
      bound && this.breaker.state(now) === 'open' ? this.breaker.permit(now) : null;
    if (upstreamOpen && !upstreamOpen.allowed) {
      return { refused: 'open', scope: 'upstream', retryAfterMs: upstreamOpen.retryAfterMs };
    }
    const keyPermit = key.permit(now);
    if (!keyPermit.allowed) {
      return { refused: 'open', scope: 'key', retryAfterMs: keyPermit.retryAfterMs };
    }
    const permit = bound ? this.breaker.permit(now) : FREE;
    if (!permit.allowed) {
      if (keyPermit.probe) key.releaseProbe();
      return { refused: 'open', scope: 'upstream', retryAfterMs: permit.retryAfterMs };
    }
    key.budget.noteCall(now);
    this.ceiling.noteCall(now);
    return { allowed: true, key, keyProbe: keyPermit.probe, upstreamProbe: permit.probe };
  }

  /** Counts how a call (or one attempt of it) ended. */
  settle(ticket: Ticket, outcome: Outcome, now: number): void {
    const { key } = ticket;
    if (outcome.pause) this.pause(key, outcome.pause, now);
    if (outcome.failed) this.failed(ticket, now);
    else this.answered(key, now);
  }

  /** A call that ended by the caller's fault: nothing counted, the probes it held given back. */
  release(ticket: Ticket): void {
    if (ticket.keyProbe) ticket.key.releaseProbe();
    if (ticket.upstreamProbe) this.breaker.releaseProbe();
  }

  /**
   * Whether a failed read may be tried once more: never a probe, only while
   * both breakers are closed, and with room in the key's budget and the
   * upstream's; takes the room when it says yes.
   */
  tryRetry(ticket: Ticket, now: number): boolean {
    const { key } = ticket;
    const ok =
      !ticket.keyProbe &&
      !ticket.upstreamProbe &&
      key.state(now) === 'closed' &&
      this.breaker.state(now) === 'closed' &&
      key.budget.hasRoom(now) &&
      this.ceiling.hasRoom(now);
    if (ok) {
      key.budget.spend(now);
      this.ceiling.spend(now);
    }
    return ok;
  }

  summary(now: number): HealthSummary {
    let open = 0;
    let halfOpen = 0;
    let held = 0;
    for (const key of this.keys.values()) {
      const state = key.state(now);
      if (state === 'open') open++;
      if (state === 'half-open') halfOpen++;
      if (key.pauseUntil > now) held++;
    }
    return {
      state: this.breaker.state(now),
      held: this.heldUntil > now,
      keys: this.keys.size,
      keys_open: open,
      keys_half_open: halfOpen,
      keys_held: held,
    };
  }

  /** The pause that holds this key now, its own or the upstream's, the longer if both. */
  private heldAt(key: KeyHealth, now: number): HealthRefusal | null {
    // The upstream's hold, like its breaker, holds only a key whose own latest call failed.
    const upstreamUntil = key.lastFailed ? this.heldUntil : 0;
    const own = key.pauseUntil > now && key.pauseUntil >= upstreamUntil;
    if (own) return { refused: 'held', scope: 'key', kind: key.pauseKind, until: key.pauseUntil };
    if (upstreamUntil > now) {
      return { refused: 'held', scope: 'upstream', kind: 'backoff', until: this.heldUntil };
    }
    return null;
  }

  /**
   * A pause the platform asked of a key holds that key, for at most
   * maxPauseMs. A 503's, from several keys with none answered between,
   * holds the whole upstream.
   */
  private pause(key: KeyHealth, pause: NonNullable<Outcome['pause']>, now: number): void {
    const until = now + Math.min(pause.seconds * 1000, this.options.maxPauseMs);
    key.pause(pause.kind, until);
    if (pause.kind === 'backoff' && this.verdict.backoff(key, now)) {
      this.heldUntil = Math.max(this.heldUntil, until);
    }
  }

  /** A call failed the platform's way: its key's breaker counts it, and the upstream's may open. */
  private failed(ticket: Ticket, now: number): void {
    const { key } = ticket;
    const opened = key.failure(now);
    key.lastFailed = true;
    if (ticket.upstreamProbe) this.breaker.failure(now);
    const platformFailing = this.verdict.failed(key, opened, now);
    if (platformFailing && this.breaker.state(now) === 'closed') this.breaker.trip(now);
  }

  /**
   * The platform answered (any key, a 4xx too): it is not failing as a whole.
   * The upstream's breaker closes, its hold ends, and what failed before
   * counts no more; a key's own breaker closes only on its own probe.
   */
  private answered(key: KeyHealth, now: number): void {
    key.success(now);
    key.lastFailed = false;
    key.answeredOnce = true;
    this.verdict.answered();
    this.breaker.close();
    this.heldUntil = 0;
  }
}

/** What the upstream's breaker answers a key it does not hold: go on, not as its probe. */
const FREE = { allowed: true, probe: false } as const;
