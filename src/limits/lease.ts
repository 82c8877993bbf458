/**
 * One isolate's lease for one tenant (metering/lease-protocol.ts): the units it
 * may admit on its own, the tenant's state as of the last answer, and what it
 * asks for next. No I/O and no clock of its own (time is passed in), so the
 * simulation test can run many of these against one TenantGuard.
 */

import type {
  LeaseAnswer,
  LeaseRequest,
  Refusal,
  Returned,
  ScopeAsk,
} from '../metering/lease-protocol';
import { scopeKey } from '../metering/lease-protocol';
import {
  answeredScopes,
  type Held,
  heldOf,
  LastWord,
  type LeaseWindow,
  LeaseWindows,
  localVerdict,
  remainingWith,
  renewAheadAt,
  runsLow,
  type ScopeTerms,
  standingOf,
  windowOf,
} from '../metering/lease-window';
import { type MeterState, meterState } from '../metering/meter-state';
import type { LimiterMode, Limits, MeterOptions, Scope } from '../metering/policy';
import type { MeterCharge } from '../metering/usage';

export interface LeaseSettings {
  leaseMaxMs: number;
  defaults: Limits;
  meterOptions: MeterOptions;
  /** How long the guard keeps usage history (USAGE_RETENTION_DAYS). */
  usageRetentionDays: number;
}

/**
 * A request admitted (with its RateLimit view, and the meters' slots its units were
 * counted in: what it spent, docs/LIMITS.md "Counting") or refused.
 */
export type Decision =
  | { kind: 'admitted'; meters: MeterState[]; cacheVersion: string; charges: MeterCharge[] }
  | { kind: 'refused'; refusal: Refusal; meters: MeterState[] };

/** What the lease says of a request: a decision, or "ask the guard". */
export type LeaseVerdict = Decision | { kind: 'ask' };

interface ScopeState extends ScopeTerms {
  /** Units this isolate admitted of the scope since the last call, and since when. */
  admitted: number;
  since: number;
  /**
   * Units it refused meanwhile because a rate window was full: demand all the same,
   * but the scope can get no more of it than that window's rate (`refusedRate`, units
   * a second, the lowest of the refusals'), so only that much counts in its want.
   */
  refused: number;
  refusedRate: number;
  lastSeen: number;
}

/** Renew ahead once this share of the lease has passed. */
const RENEW_AHEAD_AT = 0.6;
/** Below this many requests expected per lease, a scope asks for no lease (wantFor). */
const MIN_EXPECTED = 0.5;
/** Top up within the lease once a meter is down to this share of what was leased. */
const TOP_UP_BELOW = 0.25;

export class TenantLease {
  mode: LimiterMode | null = null;
  disabled = false;
  cacheVersion = '0';
  /** The tenant's plan, as the last answer said (its usage events carry it). */
  plan: string | null = null;
  /** The lease in use and the one renewed ahead (metering/lease-window.ts). */
  private readonly windows = new LeaseWindows();
  private readonly scopes = new Map<string, ScopeState>();
  /** Bumped by forget(): an answer to a request made before it is not applied. */
  private generation = 0;
  private readonly askedIn = new WeakMap<LeaseRequest, number>();
  /** What the last answers said of each scope's meters: refusal leases (metering/lease-window.ts). */
  private readonly lastWord = new LastWord();

  /**
   * Admits from the lease when it can; a refusal the last answer makes certain (also
   * once the lease has ended, while the window is known to be full: a refusal lease);
   * else "ask".
   */
  admit(scope: Scope, cost: number, now: number): LeaseVerdict {
    const key = scopeKey(scope);
    const state = this.scopes.get(key);
    if (state) state.lastSeen = now;
    // A token's end (revoked, or past its rotation overlap) is final: refused here for good.
    if (state?.tokenEnd && now >= state.tokenEnd.at) {
      return { kind: 'refused', refusal: { reason: state.tokenEnd.reason }, meters: [] };
    }
    const period = this.windows.inUse(now);
    if (period) {
      if (this.disabled) return { kind: 'refused', refusal: { reason: 'disabled' }, meters: [] };
      if (this.mode === 'leased' && state) {
        const held = heldOf(period, state.meters);
        const verdict = held && localVerdict(held, cost, now);
        if (held && verdict === null) {
          for (const h of held) h.left -= cost;
          state.admitted += cost;
          return {
            kind: 'admitted',
            meters: views(held, now),
            cacheVersion: this.cacheVersion,
            charges: chargesOf(held),
          };
        }
        if (held && verdict && verdict !== 'ask') {
          noteRefused(state, verdict, cost, held);
          return { kind: 'refused', refusal: verdict, meters: views(held, now) };
        }
      }
    }
    const known = this.lastWord.refusal(key, cost, now);
    // A window full partly with units this isolate held and has not given back yet: the
    // next call gives them back, and the guard may admit from them.
    if (!known || this.windows.returning(known.held.map((h) => h.grant.key)))
      return { kind: 'ask' };
    if (state) noteRefused(state, known.refusal, cost, known.held);
    return { kind: 'refused', refusal: known.refusal, meters: views(known.held, now) };
  }

  /**
   * What to ask the guard: the waiting request's scope and cost (none for a
   * renewal), every scope seen lately with how much it is likely to need, and
   * the unused units of leases that ended.
   */
  request(
    now: number,
    settings: LeaseSettings,
    waiting: { scope: Scope; cost: number; queued: number } | null,
  ): LeaseRequest {
    const ahead = waiting === null && this.renewal(now, settings) === 'ahead';
    const asks = new Map<string, ScopeAsk>();
    for (const [key, s] of this.scopes) {
      if (now - s.lastSeen > 2 * settings.leaseMaxMs) {
        this.scopes.delete(key);
        continue;
      }
      asks.set(key, { ...s.scope, cost: 0, want: wantFor(s, now, settings.leaseMaxMs) });
      s.admitted = 0;
      s.refused = 0;
      s.refusedRate = Number.POSITIVE_INFINITY;
      s.since = now;
    }
    if (waiting) {
      const key = scopeKey(waiting.scope);
      const prior = asks.get(key);
      asks.delete(key);
      // The waiting scope first, so its answer is the first.
      const want = Math.max(prior?.want ?? 0, waiting.queued);
      const rest = [...asks.values()];
      asks.clear();
      asks.set(key, { ...waiting.scope, cost: waiting.cost, want });
      for (const a of rest) asks.set(scopeKey(a), a);
    }
    const returns = this.windows.takeReturns();
    const current = this.windows.current;
    const req: LeaseRequest = {
      now,
      start: ahead && current ? current.expiresAt : now,
      leaseMaxMs: settings.leaseMaxMs,
      defaults: settings.defaults,
      meterOptions: settings.meterOptions,
      scopes: [...asks.values()],
      returns,
      renewal: waiting === null,
    };
    this.askedIn.set(req, this.generation);
    return req;
  }

  /**
   * Takes in the guard's answer, received at `receivedAt` by this isolate's clock;
   * returns the waiting request's admission, if there was one. An answer to a
   * request made before forget() decides its waiting request but is not kept: it
   * may predate the change that forgot.
   */
  apply(req: LeaseRequest, answer: LeaseAnswer, receivedAt: number): Decision | null {
    // A broker answers by its own clock. A lease that starts after both the time asked
    // for and the time it arrived came from a clock running ahead of this one: it is
    // moved back by the difference, keeping its length, so it is used at once and never
    // held past LEASE_MAX_MS by this clock. (Time the call took is not skew: the lease
    // started while it travelled.)
    const skew = Math.max(0, answer.start - Math.max(req.start, receivedAt));
    const period = windowOf(answer, skew);
    if (this.askedIn.get(req) === this.generation) this.keep(req, answer, period, receivedAt);
    else this.windows.retire(period);

    // A renewal has no waiting request; any other call answers its first scope, cost 0 or not.
    const grant = answer.scopes[0];
    if (req.renewal || !grant) return null;
    const held = grant.meters.flatMap((k) => {
      const h = period.meters.get(k);
      return h ? [h] : [];
    });
    return grant.refusal
      ? { kind: 'refused', refusal: grant.refusal, meters: views(held, req.now) }
      : {
          kind: 'admitted',
          meters: views(held, req.now),
          cacheVersion: answer.cacheVersion,
          // Admitted by the TenantGuard itself: already spent there.
          charges: grant.spent ? [] : chargesOf(held),
        };
  }

  /** Makes an answer this lease's state: the tenant's, its scopes', and the period it leases. */
  private keep(
    req: LeaseRequest,
    answer: LeaseAnswer,
    period: LeaseWindow,
    receivedAt: number,
  ): void {
    this.mode = answer.mode;
    this.disabled = answer.disabled;
    this.cacheVersion = answer.cacheVersion;
    this.plan = answer.plan ?? null;
    const answered = answeredScopes(req, answer);
    // A window it says is full is refused here until it frees, for one lease time at most:
    // a change that frees room early reaches this isolate with its next answer.
    const grants = [...period.meters.values()].map((h) => h.grant);
    this.lastWord.hear(answered, grants, receivedAt + req.leaseMaxMs, receivedAt);
    for (const { key, ask, grant, terms } of answered) {
      const prior = this.scopes.get(key);
      const asked = ask.cost > 0;
      const state: ScopeState = {
        ...terms,
        admitted: (prior?.admitted ?? 0) + (asked && !grant.refusal ? ask.cost : 0),
        since: prior?.since ?? req.now,
        refused: prior?.refused ?? 0,
        refusedRate: prior?.refusedRate ?? Number.POSITIVE_INFINITY,
        lastSeen: asked ? req.now : (prior?.lastSeen ?? req.now),
      };
      if (asked && grant.refusal) {
        noteRefused(state, grant.refusal, ask.cost, heldOf(period, grant.meters) ?? []);
      }
      this.scopes.set(key, state);
    }
    // The period it replaces is not used any more: its unused units go back next time.
    // A renewal ahead is the next period, even if its answer starts now (then the
    // current one has ended): the windows move on to it.
    if (req.start > req.now) this.windows.setNext(period);
    else this.windows.setCurrent(period);
  }

  /**
   * Whether a scope's token and tenant still stand, from the lease alone, without
   * counting anything: null while they do, the refusal once they do not, or
   * 'ask' when the lease cannot say (ended, or the scope unknown). `justAsked`:
   * the state came from the guard a moment ago (exact-mode answers hold for no time).
   */
  standing(scope: Scope, now: number, justAsked = false): Refusal | null | 'ask' {
    const period = justAsked || this.windows.inUse(now);
    const state = this.scopes.get(scopeKey(scope));
    if (!period || !state) return 'ask';
    return standingOf(this.disabled, state, now);
  }

  /** Whether to renew in the background now: ahead of the lease's end, or to top it up. */
  renewal(now: number, settings: LeaseSettings): 'ahead' | 'top-up' | null {
    const period = this.windows.inUse(now);
    if (!period || this.mode !== 'leased' || this.disabled || this.windows.next) return null;
    if (now >= renewAheadAt(period, RENEW_AHEAD_AT)) {
      // Ahead only makes sense if the guard will grant a later start, and may grant
      // something: a lease of windows full past its end, whose refusal lease lasts until
      // they free, is followed by that refusal lease (admit); a request asks once they do.
      if (period.expiresAt - now >= settings.leaseMaxMs) return null;
      return this.fullUntilFree(period) ? null : 'ahead';
    }
    return runsLow(period, TOP_UP_BELOW) ? 'top-up' : null;
  }

  /**
   * Whether a window holds nothing, each of its meters is known full past its end,
   * this isolate's refusal lease holds each one until it frees, and none of their
   * units wait to go back.
   */
  private fullUntilFree(period: LeaseWindow): boolean {
    // Units of these meters waiting to go back are counted by the guard until a call
    // returns them: a renewal does, and may find room in them.
    if (period.meters.size === 0 || this.windows.returning([...period.meters.keys()])) {
      return false;
    }
    for (const { grant, left } of period.meters.values()) {
      const at = grant.fitsAgainAt;
      if (left >= 1 || grant.remaining >= 1 || at === null || at < period.expiresAt) return false;
      if (at > this.lastWord.heardUntil(grant.key)) return false;
    }
    return true;
  }

  /**
   * The unused units of leases that have ended by `now`, taken out to be given back
   * without a lease call (admission.ts, when usage is sent on its own).
   */
  takeReturns(now: number): Returned[] {
    // Both periods may have ended (a renewal ahead, then nothing): each step retires one.
    this.windows.advance(now);
    this.windows.advance(now);
    return this.windows.takeReturns();
  }

  /** Drops everything known, so the next request asks the guard (after an operator change). */
  forget(): void {
    this.generation++;
    this.windows.clear();
    this.lastWord.clear();
    this.mode = null;
    this.scopes.clear();
  }
}

/**
 * Units a scope is likely to need over the next lease: twice its recent rate.
 * None before it has a rate (a lone request is counted exactly, a lease of
 * one), nor while it expects less than one request a lease: units it would
 * not use stay counted until its next call gives them back, which for thin
 * traffic is long after the lease ended.
 */
function wantFor(s: ScopeState, now: number, leaseMaxMs: number): number {
  const elapsed = Math.max(now - s.since, 50);
  const demand = s.admitted + Math.min(s.refused, (s.refusedRate * elapsed) / 1000);
  if (demand === 0) return 0;
  const expected = (demand * leaseMaxMs) / elapsed;
  return expected < MIN_EXPECTED ? 0 : Math.ceil(expected * 2);
}

/**
 * A refused request as demand: a full rate window's refusal is demand the window
 * meets later, at most at its rate (the lowest rate of the scope's meters the
 * refusal names); a quota, a token's end or a cost above a whole window is not met
 * by a lease, so it counts for nothing.
 */
function noteRefused(state: ScopeState, refusal: Refusal, cost: number, held: Held[]): void {
  if (refusal.reason !== 'rate') return;
  let rate = Number.POSITIVE_INFINITY;
  for (const { grant } of held) {
    if (grant.kind === 'rate' && grant.name === refusal.violated) {
      rate = Math.min(rate, grant.limit / Math.max(1, grant.window_s));
    }
  }
  if (rate === Number.POSITIVE_INFINITY) return;
  state.refused += cost;
  state.refusedRate = Math.min(state.refusedRate, rate);
}

/** Where an admitted request's units were counted: each meter's slot, as its grant says. */
function chargesOf(held: Held[]): MeterCharge[] {
  return held.map((h) => ({ meter: h.grant.key, slot: h.grant.slot }));
}

/** This isolate's view of a meter: what nobody holds, plus what it holds itself. */
function views(held: Held[], now: number): MeterState[] {
  return held.map((h) => meterState(h.grant, now, remainingWith(h)));
}
