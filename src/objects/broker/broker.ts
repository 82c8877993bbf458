/**
 * A regional lease broker (docs/LIMITS.md, "Hierarchical leases"): one per
 * tenant and region, between that region's isolates and the tenant's root
 * TenantGuard. It speaks the guard's own protocol (metering/lease-protocol.ts) both
 * ways: isolates ask it exactly as they would ask the root, and it asks the
 * root for a pool of units over a longer lease, which it leases on to
 * isolates in short ones. Every unit it hands out was counted by the root
 * first, so no number of brokers and isolates can admit more than a limit.
 *
 * What it buys: an isolate's wait is a regional round trip, not one across
 * the world, and the root answers a few brokers instead of every isolate.
 * Revocations, disables and cache purges reach it from the root (`forget`,
 * pushed before the operator's answer), so they still hold everywhere within
 * one isolate lease. Exact-mode tenants pass through: every request is
 * counted by the root itself.
 *
 * No I/O and no clock of its own (BrokerIo), so the fleet simulation runs
 * this very code.
 */

import type {
  BrokerCalls,
  BrokerPush,
  LeaseAnswer,
  LeaseRequest,
  MeterGrant,
  Refusal,
  Returned,
  ScopeAsk,
  ScopeGrant,
} from '../../metering/lease-protocol';
import { MIN_POOLED_LIMIT, scopeKey } from '../../metering/lease-protocol';
import {
  type AnsweredScope,
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
} from '../../metering/lease-window';
import type { LimiterMode, Limits, MeterOptions, Scope } from '../../metering/policy';
import {
  type KeyRejectionRow,
  type MinuteRow,
  type RefusalRow,
  RequestSample,
  type SpentRow,
  type UsageBatch,
  type UsageRow,
} from '../../metering/usage';
import { RECENT_KEPT } from '../tenant/recent/recent-requests-part';
import { Demand } from './broker-demand';
import { CallRate } from './broker-shards';

export interface BrokerIo {
  /** Calls the tenant's root TenantGuard. */
  acquire(req: LeaseRequest): Promise<LeaseAnswer>;
  now(): number;
  /** Asks to be woken (`renew`) at `at`; the Durable Object sets its alarm. */
  wakeAt(at: number): void;
  /** The root is to decide `req` (never a renewal): the simulation counts it as of `now`. */
  onRootDecides?(req: LeaseRequest, now: number): void;
}

export interface BrokerSettings {
  /** This broker's name at the root (its Durable Object name): the root pushes changes to it. */
  name: string;
  /** Longest lease asked of the root (BROKER_LEASE_MS); slot ends cut it shorter. */
  leaseMs: number;
}

interface ScopeState extends ScopeTerms {
  /** The region's recent use of this scope (broker-demand.ts). */
  demand: Demand;
  /** Units the region's waiting requests asked for, admitted or not: its want when it pools ahead. */
  asked: Demand;
  lastSeen: number;
}

/** What the root needs besides the scopes: the isolates' settings, as the last one sent them. */
interface AskContext {
  defaults: Limits;
  meterOptions: MeterOptions;
  usageRetentionDays?: number;
}

/** Renew ahead once this share of the pool's lease has passed. */
const RENEW_AHEAD_AT = 0.5;
/** A pool that would last less than this (a slot ending soon) is not kept: calls pass through. */
const MIN_POOL_MS = 250;
/**
 * How long a pushed change is laid over root answers: an answer to a call made
 * before the push (still in flight when it came) must not undo it. Far longer
 * than any root call may take.
 */
const PUSH_MEMORY_MS = 30_000;

/** Rounds an isolate's call waits for shared root calls before making its own. */
const MAX_ROUNDS = 5;
/** After a failed renewal, the next try is this much later. */
const RENEW_RETRY_MS = 1000;
/** Top up once a meter's pool is down to this share of what the root leased. */
const TOP_UP_BELOW = 0.25;
/**
 * At most one top-up per this long: under contention the root grants each broker
 * a slice (broker-wants.ts) and a pool soon runs low again; a hundred brokers
 * topping up at once would make the root the bottleneck brokers exist to avoid.
 */
const TOP_UP_EVERY_MS = 500;
/**
 * An isolate gets at most this share of what the pool holds, rounded down, so
 * others find some too, and the last unit is never parked in a lease that
 * starts later (an isolate renewing ahead) while a request waits now.
 */
const ISOLATE_SHARE = 1 / 2;
/** An isolate renewing ahead from the pool in use now gets at most this share of it. */
const AHEAD_SHARE = 1 / 4;
/**
 * A tenant far from its limits: the root had at least this many times the pool
 * left over on every meter at its last answer. Nothing is scarce then, so the
 * broker asks for twice its usual pool and leases an isolate all it wants (for
 * its lease): halving made one busy isolate top up again and again.
 */
const PLENTY = 10;
/**
 * Scopes seen within this long keep being renewed ahead: thin traffic (a few
 * requests a minute per region) then finds a pool ready instead of waiting
 * for the root.
 */
export const KEEP_SCOPES_MS = 60_000;
/**
 * A broker passing calls through for short slots whose window was just refused pools
 * ahead (`poolsAhead`) for this long after the last refusal: the root's first, then
 * its own, so it keeps on while its region is refused and stops once demand drops.
 */
const AHEAD_FOR_MS = 1000;
/** A pool asked ahead starts this long after the root's round trip, so it arrives first. */
const AHEAD_MARGIN_MS = 5;
/** Idle scopes are looked for at most this often from isolates' calls (passing through, no timer runs). */
const DROP_IDLE_EVERY_MS = 1000;
/** Usage rows held for the next root call before a call is made for them alone. */
const MAX_USAGE_ROWS = 5000;

// Read from the root's answers (plenty from pools only): how the broker treats the tenant next.

const hasSmallMeter = (answer: LeaseAnswer) =>
  answer.mode === 'leased' && answer.meters.some((m) => m.limit < MIN_POOLED_LIMIT);

/**
 * Whether a lease ends within MIN_POOL_MS because its slots are that short
 * (windows of a few seconds). One that ends soon only because it was asked
 * late in a longer slot is not: the pool renews ahead into the next slot.
 * The meter whose slot started last is the one whose slot ends first (every
 * slot starts by the lease's start, so the lease is no longer than that slot).
 */
function hasShortSlots(answer: LeaseAnswer): boolean {
  if (answer.mode !== 'leased' || answer.disabled || answer.meters.length === 0) return false;
  return answer.expiresAt - lastSlotStart(answer) < MIN_POOL_MS;
}

const lastSlotStart = (answer: LeaseAnswer) => Math.max(...answer.meters.map((m) => m.slot));

const hasPlenty = (answer: LeaseAnswer) =>
  answer.meters.every((m) => m.remaining >= PLENTY * Math.max(1, m.leased));

export class BrokerCore {
  private mode: LimiterMode | null = null;
  /** The root's leases end within MIN_POOL_MS (short windows): calls pass through. */
  private shortSlots = false;
  /** A meter of fewer than MIN_POOLED_LIMIT units: calls pass through. */
  private smallLimits = false;
  /** The root had PLENTY times the pool left at its last answer. */
  private plenty = false;
  private disabled = false;
  private cacheVersion = '0';
  private plan: string | null = null;
  /**
   * The pool in use and the one renewed ahead (metering/lease-window.ts), and the
   * units to give back to the root with the next call.
   */
  private readonly pools = new LeaseWindows();
  private readonly scopes = new Map<string, ScopeState>();
  private readonly usage = new PendingUsage();
  private calls: BrokerCalls = { acquires: 0, renewals: 0 };
  /** Isolate calls a second: a hot broker advises its isolates to spread (broker-shards.ts). */
  private readonly rate = new CallRate();
  private context: AskContext | null = null;
  /** Units of isolate requests waiting here for a root call, by scope: asked for with it. */
  private readonly queued = new Map<string, number>();
  /** The root call in flight, which other isolates' calls wait for. */
  private inFlight: Promise<void> | null = null;
  /** Bumped by forget(): an answer to a call made before it is given back, not kept. */
  private generation = 0;
  /** Changes the root pushed lately, numbered, laid over answers to calls made before them. */
  private readonly pushed: { seq: number; at: number; change: BrokerPush }[] = [];
  private pushes = 0;
  /** When the pool was last topped up (TOP_UP_EVERY_MS). */
  private toppedUpAt = Number.NEGATIVE_INFINITY;
  /**
   * What the root's answers said of each scope and meter: windows known to be full are
   * refused here until they free (refusal leases), for one pool lease at most, so a
   * broker the root's push missed repeats nothing longer than it would hold a pool.
   */
  private readonly lastWord = new LastWord();
  /** Isolate calls passed through to the root and not answered yet, by their waiting scope. */
  private readonly passing = new Map<string, number>();
  /** Until when it pools ahead (short slots, a window the root refused lately). */
  private aheadUntil = Number.NEGATIVE_INFINITY;
  /** Pooling ahead, the meters refusals found full: only these wait for the next pool. */
  private readonly aheadFull = new Set<string>();
  /** The root's round trip as this broker sees it, smoothed. */
  private rootRtt = 0;
  /** Where the pool asked ahead starts, while the call for it is out (null otherwise). */
  private askedAheadFor: number | null = null;
  /** The short slots, as the root's last answer shows them (a slot's start and length). */
  private slotGrid: { origin: number; length: number } | null = null;
  /** When idle scopes were last dropped (DROP_IDLE_EVERY_MS). */
  private droppedIdleAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly settings: BrokerSettings,
    private readonly io: BrokerIo,
  ) {}

  /** An isolate's call (metering/lease-protocol.ts): answered from the pool, or after one call to the root. */
  async acquire(req: LeaseRequest): Promise<LeaseAnswer> {
    const now = this.io.now();
    this.calls[req.renewal ? 'renewals' : 'acquires']++;
    this.rate.record(now);
    this.context = {
      defaults: req.defaults,
      meterOptions: req.meterOptions,
      usageRetentionDays: req.usageRetentionDays,
    };
    this.unDemand(req.returns);
    this.pools.takeBack(req.returns);
    if (req.usage) this.addUsage(req.usage);
    if (now - this.droppedIdleAt >= DROP_IDLE_EVERY_MS) this.dropIdleScopes(now);
    const waiting = req.renewal ? undefined : req.scopes[0];
    const waitingState = waiting && this.scopes.get(scopeKey(waiting));
    if (waiting && waitingState) {
      waitingState.asked.add(waiting.cost, now);
      waitingState.lastSeen = now;
    }
    if (this.passesThrough()) return this.passOn(req, now);
    // Each round answers from the pool, or waits for one root call that tops it up
    // for every request waiting here, so a busy region makes one root call at a time.
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const answer = this.fromPool(req, undefined) ?? this.fromLastWord(req);
      if (answer) {
        this.renewIfDue();
        return answer;
      }
      if (!this.inFlight) {
        // Nothing known yet for this request: its own call decides it at once.
        if (!this.knows(req)) break;
        this.rootCall(null, this.poolStartFor(req), [], req).catch(() => {});
      }
      const key = waiting && scopeKey(waiting);
      if (key) addCount(this.queued, key, waiting?.cost ?? 0);
      await this.inFlight;
      if (key) takeCount(this.queued, key, waiting?.cost ?? 0);
      // The first root call showed short slots or small limits: the same as any call passed on.
      if (this.passesThrough()) return this.passOn(req, this.io.now());
    }
    return this.askRoot(req);
  }

  /** A call while passing through: answered here when it can be, else by the root. */
  private async passOn(req: LeaseRequest, now: number): Promise<LeaseAnswer> {
    const answer = this.passedOnLocally(req, now);
    const answered = this.noteRefused(answer ?? (await this.passThrough(req)));
    return this.poolsAhead() ? this.untilNextPool(req, answered) : answered;
  }

  /**
   * Passing calls through, the answer it can give without the root, or null: pooling
   * ahead, from the pool, or refused until the next pool; else a refusal lease, and,
   * while this scope's own call asks the root whether its full window has freed, a
   * refusal for a moment longer.
   */
  private passedOnLocally(req: LeaseRequest, now: number): LeaseAnswer | null {
    if (this.poolsAhead()) {
      void this.askAhead().catch(() => {});
      return (
        this.fromPool(req, undefined) ??
        this.fromLastWord(req) ??
        this.fromLastWord(req, this.aheadRefusal())
      );
    }
    const waiting = req.renewal ? undefined : req.scopes[0];
    const asking = waiting !== undefined && this.passing.has(scopeKey(waiting));
    return this.fromLastWord(req) ?? (asking ? this.fromLastWord(req, dueNowStillFull(now)) : null);
  }

  /**
   * Whether it only passes its isolates' calls on for good (exact mode, meters too small
   * to pool). Short slots are not: they come and go with the slot, and the simulation's
   * flash crowd used less of its limit when isolates left the broker for them.
   */
  onlyPassesOn(): boolean {
    return this.mode === 'exact' || this.smallLimits;
  }

  /** Isolate calls in the last whole second. */
  callsPerSecond(): number {
    return this.rate.perSecond(this.io.now());
  }

  /**
   * Where a pool for this request starts: now, or the current pool's end when the
   * isolate renews ahead past it (a pool for now would not serve it, round after round).
   */
  private poolStartFor(req: LeaseRequest): number {
    const now = this.io.now();
    const current = this.poolAt(now);
    return current && req.start >= current.expiresAt ? current.expiresAt : now;
  }

  /** Whether the pool and the root's last word cover every scope of a request. */
  private knows(req: LeaseRequest): boolean {
    const pool = this.poolAt(this.io.now());
    return (
      pool !== null &&
      req.scopes.every((ask) =>
        this.scopes.get(scopeKey(ask))?.meters.every((k) => pool.meters.has(k)),
      )
    );
  }

  /**
   * The root's push after an operator change (metering/lease-protocol.ts, BrokerPush),
   * made before the operator's answer. A token's end, a disable or a cache purge
   * is applied to what the broker knows, and the pool keeps serving: every broker
   * asking the root again at once would be a burst of calls at a busy root. New
   * limits (`reset`) drop everything. Isolates' own leases run out within
   * LEASE_MAX_MS either way.
   */
  apply(change: BrokerPush): void {
    if (change.kind === 'reset') {
      this.forget();
      return;
    }
    const now = this.io.now();
    while (this.pushed.length > 0 && (this.pushed[0]?.at ?? now) < now - PUSH_MEMORY_MS) {
      this.pushed.shift();
    }
    this.pushed.push({ seq: ++this.pushes, at: now, change });
    this.overlay(change);
  }

  /**
   * Everything known is dropped (its units go back to the root with the next
   * call), so the next isolate call learns the tenant's limits afresh.
   */
  private forget(): void {
    this.generation++;
    this.pools.clear();
    this.lastWord.clear();
    this.mode = null;
    this.smallLimits = false;
    this.shortSlots = false;
    this.plenty = false;
    this.disabled = false;
    this.scopes.clear();
    this.pushed.length = 0;
    // Pooling ahead is for a window the old limits filled: the new ones may have room.
    this.aheadUntil = Number.NEGATIVE_INFINITY;
    this.aheadFull.clear();
    this.slotGrid = null;
  }

  /** A pushed change, applied to the tenant's state as the broker knows it. */
  private overlay(change: BrokerPush): void {
    if (change.kind === 'disabled') this.disabled = true;
    else if (change.kind === 'cache') this.cacheVersion = change.version;
    else if (change.kind === 'token') {
      for (const s of this.scopes.values()) {
        if (s.scope.tokenId === change.tokenId && (!s.tokenEnd || s.tokenEnd.at > change.end.at)) {
          s.tokenEnd = change.end;
        }
      }
    }
  }

  /** Lays the changes pushed since a call was made over the state its answer set. */
  private overlaySince(seq: number): void {
    for (const p of this.pushed) if (p.seq > seq) this.overlay(p.change);
  }

  /** The timer: renews ahead while scopes were seen lately; the next wake-up time or null. */
  async renew(): Promise<number | null> {
    const now = this.io.now();
    this.dropIdleScopes(now);
    // A call in flight schedules the next wake-up when it settles.
    if (this.inFlight) return null;
    if (this.poolsAhead()) {
      try {
        await this.askAhead();
      } catch {
        return now + RENEW_RETRY_MS;
      }
      return null;
    }
    if (this.scopes.size === 0 || this.mode !== 'leased' || this.passesThrough()) return null;
    const pool = this.poolAt(now);
    if (!pool || !this.pools.next) {
      try {
        await this.rootCall(null, pool ? pool.expiresAt : now);
      } catch {
        return now + RENEW_RETRY_MS;
      }
      return this.wakeTime();
    }
    // Renewed already: a wake-up time that has passed would wake it again at once, and
    // again, until the pool ends. The next isolate call sets the timer again if need be.
    const wake = this.wakeTime();
    return wake !== null && wake > now ? wake : null;
  }

  /** When the pool should be renewed ahead (half through the latest lease), or null when nothing needs it. */
  wakeTime(): number | null {
    // Pooling ahead: the next pool is asked for once the one held starts.
    if (this.poolsAhead()) return this.pools.next?.start ?? this.io.now();
    const pool = this.pools.next ?? this.pools.current;
    // Passing calls through (short slots): a pool would end before it paid for its call.
    if (!pool || this.scopes.size === 0 || this.mode !== 'leased' || this.passesThrough()) {
      return null;
    }
    return renewAheadAt(pool, RENEW_AHEAD_AT);
  }

  /**
   * Exact mode, leases shorter than MIN_POOL_MS (windows of a few seconds, whose
   * slots end that soon: a pool would end before it paid for its round trip) and
   * meters smaller than MIN_POOLED_LIMIT: isolates' calls go through to the root
   * as they are.
   */
  private passesThrough(): boolean {
    return this.mode === 'exact' || this.shortSlots || this.smallLimits;
  }

  private async passThrough(req: LeaseRequest): Promise<LeaseAnswer> {
    if (!req.renewal) this.io.onRootDecides?.(req, this.io.now());
    const usage = this.takeUsage();
    if (!this.poolsAhead()) this.pools.clear();
    const returns = this.pools.takeReturns();
    const forwarded: LeaseRequest = {
      ...req,
      // Counted as of now, here: as the pool's calls are.
      now: this.io.now(),
      // The isolate's returns were taken back into the pools (acquire), now retired into these.
      returns,
      // The isolate's usage was added to the broker's own in acquire(): send it once.
      usage: usage ?? undefined,
      brokerCalls: this.takeCalls(),
    };
    const seq = this.pushes;
    const generation = this.generation;
    const passingKey = req.renewal ? undefined : req.scopes[0] && scopeKey(req.scopes[0]);
    if (passingKey) addCount(this.passing, passingKey, 1);
    const sent = this.io.now();
    const answer = await this.io
      .acquire(forwarded)
      .catch((err: unknown) => {
        this.pools.giveBackLater(returns);
        throw err;
      })
      .finally(() => {
        if (passingKey) takeCount(this.passing, passingKey, 1);
      });
    this.timed(sent);
    // Limits changed while it was out (forget): the answer decides its own request, but
    // what it says of the tenant may predate the change and is not kept (as in rootCall).
    if (generation !== this.generation) return answer;
    this.mode = answer.mode;
    this.disabled = answer.disabled;
    this.cacheVersion = answer.cacheVersion;
    this.plan = answer.plan ?? null;
    const answered = answeredScopes(req, answer);
    this.hear(answered, answer.meters);
    this.noteScopes(answered, req.now);
    this.overlaySince(seq);
    // Slots long enough for a pool again: pool from the next call.
    this.noteSlots(answer);
    this.smallLimits = hasSmallMeter(answer);
    this.noteLeased(answered, answer.meters);
    return answer;
  }

  /** Whether an answer's slots are short, and if so their grid (its lease ends with its slot). */
  private noteSlots(answer: LeaseAnswer): void {
    this.shortSlots = hasShortSlots(answer);
    if (!this.shortSlots) return;
    const origin = lastSlotStart(answer);
    const length = answer.expiresAt - origin;
    if (length > 0) this.slotGrid = { origin, length };
  }

  /** The scopes a root answer speaks of: their meters and token ends, kept with their demand. */
  private noteScopes(answered: AnsweredScope[], askedAt: number): void {
    for (const { key, terms } of answered) {
      const prior = this.scopes.get(key);
      this.scopes.set(key, {
        ...terms,
        demand: prior?.demand ?? new Demand(askedAt),
        asked: prior?.asked ?? new Demand(askedAt),
        lastSeen: prior?.lastSeen ?? askedAt,
      });
    }
  }

  /** A root call sent at `sent` has been answered: the round trip, smoothed. */
  private timed(sent: number): void {
    const rtt = this.io.now() - sent;
    this.rootRtt = this.rootRtt === 0 ? rtt : 0.8 * this.rootRtt + 0.2 * rtt;
  }

  /**
   * Whether it pools ahead: its calls pass through for short slots, and one of its
   * windows was refused (by the root, or here while pooling ahead) within AHEAD_FOR_MS. Every isolate of a saturated
   * region would otherwise ask the root each time a unit frees, most of them to be
   * refused, nearer regions first: instead the broker asks the root for a pool of
   * the slot one round trip ahead, which the root shares among brokers in proportion
   * to their wants, and refuses its isolates until it has one
   * (docs/LIMITS.md, "Refusal leases").
   */
  private poolsAhead(): boolean {
    return (
      this.shortSlots &&
      !this.smallLimits &&
      this.mode === 'leased' &&
      !this.disabled &&
      this.io.now() < this.aheadUntil
    );
  }

  /**
   * Pooling ahead, between pools: the meters a refusal found full have nothing for
   * this region until the next pool starts (or, none held yet, one round trip on).
   * Other meters stay as last heard: a quota or another scope with room is not
   * refused, named or shown spent for a window that is not its own.
   */
  private aheadRefusal(): (grant: MeterGrant) => MeterGrant {
    const now = this.io.now();
    const next = this.pools.next;
    const pooled = next ?? this.pools.current;
    const at = next?.start ?? this.askedAheadFor ?? now + this.rootRtt + AHEAD_MARGIN_MS;
    return (g) =>
      this.aheadFull.has(g.key) && (!pooled || pooled.meters.has(g.key))
        ? { ...g, remaining: 0, fitsAgainAt: Math.max(at, now + 1) }
        : g;
  }

  /** A refusal of a window, while its slots are short: pool ahead for a while. */
  private noteRefused(answer: LeaseAnswer): LeaseAnswer {
    const refusal = answer.scopes[0]?.refusal;
    if (this.shortSlots && (refusal?.reason === 'rate' || refusal?.reason === 'quota')) {
      const entering = !this.poolsAhead();
      if (entering) this.aheadFull.clear();
      for (const g of answer.meters) if (g.fitsAgainAt !== null) this.aheadFull.add(g.key);
      this.aheadUntil = this.io.now() + AHEAD_FOR_MS;
      if (entering) void this.askAhead().catch(() => {});
    }
    return answer;
  }

  /**
   * Asks the root for the pool of the slot that starts one round trip from now (or
   * when the current pool ends), unless a call is out or the next pool is held.
   */
  private askAhead(): Promise<void> {
    const now = this.io.now();
    const current = this.poolAt(now);
    if (this.inFlight || this.pools.next) return Promise.resolve();
    const start = this.slotStartFrom(
      Math.max(current?.expiresAt ?? now, now + this.rootRtt + AHEAD_MARGIN_MS),
    );
    this.askedAheadFor = start;
    return this.rootCall(null, start).finally(() => {
      if (this.askedAheadFor === start) this.askedAheadFor = null;
    });
  }

  /**
   * The first start of a short slot at or after `t`, by the slots of the root's last
   * answer (its lease ended with the slot that started last), so a pool asked ahead
   * holds a whole slot; `t` itself before anything is known.
   */
  private slotStartFrom(t: number): number {
    const grid = this.slotGrid;
    if (!grid) return t;
    return grid.origin + Math.ceil((t - grid.origin) / grid.length) * grid.length;
  }

  /**
   * How many pools' worth a pool asked ahead must cover: until the next can arrive,
   * one round trip after this one starts (a slot shorter than that is a fraction of it).
   */
  private aheadCover(): number {
    const pool = this.pools.current ?? this.pools.next;
    const length = pool ? Math.max(1, pool.expiresAt - pool.start) : 1;
    return Math.max(1, (this.rootRtt + AHEAD_MARGIN_MS) / length);
  }

  /**
   * Pooling ahead, a refusal's meters fit again, for this region's isolates, when the
   * next pool holding units of them starts: their refusal leases end then, so the
   * pool's units meet requests. The refusal says so too (its Retry-After and policy),
   * so the first refusal and the isolate's repeats of it agree.
   */
  private untilNextPool(req: LeaseRequest, answer: LeaseAnswer): LeaseAnswer {
    const next = this.pools.next;
    const grant = answer.scopes[0];
    const waiting = req.scopes[0];
    if (!next || !grant?.refusal || !waiting) return answer;
    answer.meters = answer.meters.map((g) => {
      const h = next.meters.get(g.key);
      const later = g.fitsAgainAt !== null && g.fitsAgainAt > next.start;
      return h && h.left > 0 && later ? { ...g, fitsAgainAt: next.start } : g;
    });
    if (grant.refusal.reason !== 'rate' && grant.refusal.reason !== 'quota') return answer;
    const byKey = new Map(answer.meters.map((g) => [g.key, g]));
    const held = grant.meters.flatMap((k) => {
      const g = byKey.get(k);
      return g ? [{ grant: g, left: 0 }] : [];
    });
    const verdict = localVerdict(held, waiting.cost, this.io.now());
    if (verdict && verdict !== 'ask') answer.scopes[0] = { ...grant, refusal: verdict };
    return answer;
  }

  /** Keeps what a root answer says of each scope's meters, for refusal leases. */
  private hear(answered: AnsweredScope[], meters: MeterGrant[]): void {
    const now = this.io.now();
    this.lastWord.hear(answered, meters, now + this.settings.leaseMs, now);
  }

  /**
   * The refusal of an isolate's waiting request when the root's last word says its
   * window is full until a later time (a refusal lease): answered here, with the
   * meters as the root last counted them and nothing leased, instead of a root call
   * the root would refuse. Null when the last word cannot say, or the tenant's or
   * token's standing is in question (the usual path decides those).
   */
  private fromLastWord(
    req: LeaseRequest,
    early?: (grant: MeterGrant) => MeterGrant,
  ): LeaseAnswer | null {
    const waiting = req.renewal ? undefined : req.scopes[0];
    if (!waiting || this.disabled) return null;
    const now = this.io.now();
    const key = scopeKey(waiting);
    const state = this.scopes.get(key);
    // A token's end is final: refused here, as the root would.
    const ended = state && standingOf(false, state, now);
    if (ended)
      return this.bare(req, { meters: state.meters, tokenEnd: state.tokenEnd, refusal: ended });
    const known = this.lastWord.refusal(key, waiting.cost, now, early);
    if (!known) return null;
    return this.bare(
      req,
      {
        meters: known.held.map((h) => h.grant.key),
        tokenEnd: state?.tokenEnd ?? null,
        refusal: known.refusal,
      },
      known.held.map((h) => onward(h, 0)),
    );
  }

  /**
   * Units the root leased straight to an isolate (a call passed through) count in
   * its region's demand as pooled ones do: they come back through here too (unDemand).
   */
  private noteLeased(answered: AnsweredScope[], meters: MeterGrant[]): void {
    const now = this.io.now();
    const leased = new Map(meters.map((m) => [m.key, m.leased]));
    for (const { key, ask, grant } of answered) {
      const state = this.scopes.get(key);
      if (!state) continue;
      const units = Math.max(0, ...grant.meters.map((k) => leased.get(k) ?? 0));
      state.demand.add(units + (ask.cost > 0 && !grant.refusal ? ask.cost : 0), now);
    }
  }

  /** One call to the root for this isolate request; the answer decides its waiting cost. */
  private async askRoot(req: LeaseRequest): Promise<LeaseAnswer> {
    const waiting = req.renewal ? null : req.scopes[0];
    let decided: ScopeGrant | undefined;
    let exact: LeaseAnswer | undefined;
    let counted: MeterGrant[] = [];
    const now = this.io.now();
    if (!req.renewal) this.io.onRootDecides?.(req, now);
    // An isolate renewing ahead asks for the time after its lease: so does the pool.
    const start = req.renewal && req.start > now ? req.start : now;
    // The root counts this request's cost against what nobody holds: give the pool's
    // unused units back with the call, so none are stranded here while it refuses.
    if (waiting && waiting.cost > 0) this.pools.dropCurrent();
    await this.rootCall(waiting ?? null, start, [], req, (grant, answer) => {
      decided = grant;
      counted = answer.meters;
      if (answer.mode === 'exact') exact = answer;
    });
    // Exact mode: the root's answer is the isolate's (its scopes come first, in its order).
    if (exact) return { ...exact, scopes: exact.scopes.slice(0, req.scopes.length) };
    const answer = this.fromPool(req, decided);
    if (answer) return answer;
    // The root answered but the pool cannot serve this request (forgotten meanwhile):
    // the waiting request's own decision stands, with nothing leased, and with its
    // meters as the root counted them.
    const own = new Set(decided?.meters);
    return this.bare(
      req,
      decided,
      counted.filter((g) => own.has(g.key)).map((g) => ({ ...g, leased: 0 })),
    );
  }

  /**
   * Asks the root for every scope seen lately, the waiting request's cost
   * (counted by the root at once) first. `start`: now, or the current pool's
   * end when renewing ahead.
   */
  private rootCall(
    waiting: ScopeAsk | null,
    start: number,
    also: Scope[] = [],
    isolateReq?: LeaseRequest,
    decide?: (grant: ScopeGrant | undefined, answer: LeaseAnswer) => void,
  ): Promise<void> {
    const context = this.context;
    if (!context) return Promise.resolve();
    const now = this.io.now();
    const asks = new Map<string, ScopeAsk>();
    if (waiting) asks.set(scopeKey(waiting), { ...waiting, want: 0 });
    for (const scope of [...(isolateReq?.scopes ?? []), ...also]) {
      const key = scopeKey(scope);
      if (!asks.has(key)) {
        const { group, tokenId, partition } = scope;
        asks.set(key, { group, tokenId, partition, cost: 0, want: 0 });
      }
    }
    for (const [key, s] of this.scopes) {
      if (!asks.has(key)) asks.set(key, { ...s.scope, cost: 0, want: 0 });
    }
    const length = Math.max(1, this.settings.leaseMs);
    // An isolate's want is for its own lease: over the pool's longer one it is that many
    // times more. It counts before the region has a demand of its own (a cold pool).
    const perPool = length / Math.max(1, isolateReq?.leaseMaxMs ?? length);
    const scale = this.plenty ? 2 : 1;
    const ahead = this.poolsAhead() ? this.aheadCover() : 0;
    for (const [key, ask] of asks) {
      const isolateWant = isolateReq?.scopes.find((a) => scopeKey(a) === key)?.want ?? 0;
      ask.want =
        scale * Math.max(this.wantFor(key, now, length), Math.ceil(isolateWant * perPool)) +
        (this.queued.get(key) ?? 0);
      // Pooling ahead, the region wants what its requests asked for (refused ones too),
      // over the time until the pool after this one can arrive: the root splits a
      // saturated window among brokers in proportion to their wants.
      const asked = this.scopes.get(key)?.asked;
      if (ahead > 0 && asked) ask.want = Math.ceil(asked.want(now, length) * ahead);
    }
    // The current pool keeps serving isolates while this call is out; the answer
    // replaces it (keep), and its unused units go back with the next call.
    const returns = this.pools.takeReturns();
    const rootReq: LeaseRequest = {
      now,
      start,
      leaseMaxMs: length,
      defaults: context.defaults,
      meterOptions: context.meterOptions,
      scopes: [...asks.values()],
      returns,
      renewal: waiting === null,
      usage: this.takeUsage() ?? undefined,
      usageRetentionDays: context.usageRetentionDays,
      holder: this.settings.name,
      brokerCalls: this.takeCalls(),
    };
    const generation = this.generation;
    const seq = this.pushes;
    const call = this.io.acquire(rootReq).then(
      (answer) => {
        this.timed(now);
        if (generation === this.generation) {
          this.keep(rootReq, answer);
          this.overlaySince(seq);
        } else this.pools.retire(windowOf(answer));
        decide?.(waiting ? answer.scopes[0] : undefined, answer);
      },
      (err: unknown) => {
        // The units asked to be given back are lost to this call: try again next time.
        this.pools.giveBackLater(returns);
        throw err;
      },
    );
    const settled = call.finally(() => {
      if (this.inFlight === waitable) this.inFlight = null;
      const wake = this.wakeTime();
      if (wake !== null) this.io.wakeAt(wake);
    });
    const waitable = settled.catch(() => {});
    this.inFlight = waitable;
    return settled;
  }

  /** The root's answer becomes the pool and the tenant's state. */
  private keep(req: LeaseRequest, answer: LeaseAnswer): void {
    const answered = answeredScopes(req, answer);
    this.hear(answered, answer.meters);
    this.noteSlots(answer);
    this.mode = answer.mode;
    this.smallLimits = hasSmallMeter(answer);
    this.plenty = hasPlenty(answer);
    this.disabled = answer.disabled;
    this.cacheVersion = answer.cacheVersion;
    this.plan = answer.plan ?? null;
    this.noteScopes(answered, req.now);
    const pool = windowOf(answer);
    // A pool asked to start later within the slots in use now (for an isolate renewing
    // ahead inside them) holds from now: its units count in those slots anyway. Kept as
    // the next pool it would overlap the current one, and renewing it ahead would be due
    // before the current one ends.
    if (pool.start > req.now && answer.meters.every((m) => m.slot <= req.now)) {
      pool.start = req.now;
    }
    // A pool replaced within its slot hands its unused units to the new one (they
    // are counted for that slot already); units of another slot go back to the root.
    if (pool.start > req.now) this.pools.setNext(pool);
    else this.pools.setCurrent(pool, true);
  }

  /**
   * The answer to an isolate from the pool alone, or null when the pool cannot
   * give one (no pool for its start, an unknown scope or meter, or too few
   * units and no certain refusal). `decided`: the root already decided the
   * waiting request's cost.
   */
  private fromPool(req: LeaseRequest, decided: ScopeGrant | undefined): LeaseAnswer | null {
    const now = this.io.now();
    const start = Math.min(Math.max(req.start, now), now + req.leaseMaxMs);
    const pool = this.mode === 'leased' || this.disabled ? this.poolAt(start) : null;
    if (!pool || pool.expiresAt <= now) return null;
    const asks: { ask: ScopeAsk; state: ScopeState; held: Held[]; refusal: Refusal | null }[] = [];
    for (const [i, ask] of req.scopes.entries()) {
      const state = this.scopes.get(scopeKey(ask));
      if (!state) return null;
      const held = heldOf(pool, state.meters);
      if (!held) return null;
      // Decide every request before touching the pool, so an 'ask' leaves it as it was.
      const refusal = i === 0 && decided ? decided.refusal : standingOf(this.disabled, state, now);
      const counted = i === 0 && decided !== undefined;
      const verdict =
        refusal ?? (ask.cost > 0 && !counted ? localVerdict(held, ask.cost, now) : null);
      if (verdict === 'ask') return null;
      asks.push({ ask, state, held, refusal: verdict });
    }

    const scopes = asks.map(({ ask, state, held, refusal }, i): ScopeGrant => {
      if (!refusal && ask.cost > 0) {
        if (!(i === 0 && decided)) for (const h of held) h.left -= ask.cost;
        state.demand.add(ask.cost, now);
      }
      state.lastSeen = now;
      // The root admitted the waiting cost itself: it counted it as spent.
      const spent = i === 0 && decided?.spent === true;
      return {
        meters: state.meters,
        tokenEnd: state.tokenEnd,
        refusal,
        ...(spent ? { spent } : {}),
      };
    });

    // Lease on: what each scope wants, within a share of what the pool holds.
    const leased = new Map<string, number>();
    const share = this.isolateShare(start, now, pool);
    const expiresAt = Math.max(start, Math.min(start + req.leaseMaxMs, pool.expiresAt));
    // A want is for a whole isolate lease: this one may end sooner, with the pool.
    const lengthShare = (expiresAt - start) / Math.max(1, req.leaseMaxMs);
    if (this.mode === 'leased' && !this.disabled) {
      for (const { ask, state, held, refusal } of asks) {
        if (refusal || ask.want <= 0) continue;
        const want = Math.ceil(ask.want * lengthShare);
        let given = 0;
        for (const h of held) {
          const units = Math.min(want, Math.floor(h.left * share));
          if (units <= 0) continue;
          h.left -= units;
          leased.set(h.grant.key, (leased.get(h.grant.key) ?? 0) + units);
          given = Math.max(given, units);
        }
        state.demand.add(given, now);
      }
    }
    const meters = new Map<string, Held>();
    for (const { held } of asks) for (const h of held) meters.set(h.grant.key, h);
    return {
      mode: this.mode ?? 'leased',
      disabled: this.disabled,
      cacheVersion: this.cacheVersion,
      plan: this.plan,
      start,
      expiresAt: this.mode === 'leased' || this.disabled ? expiresAt : now,
      scopes,
      meters: [...meters.values()].map((h) => onward(h, leased.get(h.grant.key) ?? 0)),
    };
  }

  /**
   * An answer with nothing leased: the waiting request's decision and the tenant's
   * state. `meters`: the decided scope's, with nothing leased; an isolate takes an
   * admitted request's RateLimit fields from them, and gives none without them.
   */
  private bare(
    req: LeaseRequest,
    decided: ScopeGrant | undefined,
    meters: MeterGrant[] = [],
  ): LeaseAnswer {
    const now = this.io.now();
    // Every scope but a decided one is answered with its meters as the broker knows them,
    // in order, up to the first it does not know: an isolate takes a grant's meters as
    // the scope's, and one without them would admit that scope uncounted from a later
    // lease. An isolate keeps what it knew of scopes an answer leaves out.
    const scopes: ScopeGrant[] = [];
    for (const [i, ask] of req.scopes.entries()) {
      if (i === 0 && decided) {
        scopes.push(decided);
        continue;
      }
      const state = this.scopes.get(scopeKey(ask));
      if (!state) break;
      const refusal = standingOf(this.disabled, state, now);
      scopes.push({ meters: state.meters, tokenEnd: state.tokenEnd, refusal });
    }
    return {
      mode: this.mode ?? 'leased',
      disabled: this.disabled,
      cacheVersion: this.cacheVersion,
      plan: this.plan,
      start: now,
      expiresAt: now,
      scopes,
      meters,
    };
  }

  /** Renews in the background once the pool is half used up in time, or low on units. */
  private renewIfDue(): void {
    if (this.inFlight || this.mode !== 'leased' || this.disabled) return;
    const now = this.io.now();
    const pool = this.poolAt(now);
    if (!pool) return;
    if (!this.pools.next && now >= renewAheadAt(pool, RENEW_AHEAD_AT)) {
      this.rootCall(null, pool.expiresAt).catch(() => {});
      return;
    }
    if (runsLow(pool, TOP_UP_BELOW) && now - this.toppedUpAt >= TOP_UP_EVERY_MS) {
      this.toppedUpAt = now;
      this.rootCall(null, now).catch(() => {});
    }
  }

  /** Units a scope's region is likely to need over a lease of `length` (0 for an unknown scope). */
  private wantFor(key: string, now: number, length: number): number {
    return this.scopes.get(key)?.demand.want(now, length) ?? 0;
  }

  private dropIdleScopes(now: number): void {
    this.droppedIdleAt = now;
    for (const [key, s] of this.scopes) {
      if (now - s.lastSeen > KEEP_SCOPES_MS) this.scopes.delete(key);
    }
  }

  /**
   * The most of a pool one isolate lease takes: all it wants while nothing is scarce
   * (PLENTY); else a lease that starts later but draws on the pool in use now takes
   * less, so a request arriving before it starts still finds units (AHEAD_SHARE), and
   * any other at most half (ISOLATE_SHARE).
   */
  private isolateShare(start: number, now: number, pool: LeaseWindow): number {
    if (this.plenty) return 1;
    return start > now && pool === this.pools.current ? AHEAD_SHARE : ISOLATE_SHARE;
  }

  /**
   * Units isolates give back were handed out but not used: they leave the demand
   * of the scopes counted against their meter, in proportion to each one's, so a
   * region's demand is what it used, not what its isolates held. A lease is of
   * every meter of a scope at once (the demand counted it once), so a scope's
   * demand loses what came back of its most returned meter, not the sum over meters.
   */
  private unDemand(returns: Returned[]): void {
    if (returns.length === 0) return;
    const now = this.io.now();
    const back = new Map<ScopeState, number>();
    for (const r of returns) {
      const using = [...this.scopes.values()].filter((s) => s.meters.includes(r.meter));
      const total = using.reduce((sum, s) => sum + s.demand.value(now), 0);
      if (total <= 0) continue;
      for (const s of using) {
        const units = (r.units * s.demand.value(now)) / total;
        back.set(s, Math.max(back.get(s) ?? 0, units));
      }
    }
    for (const [s, units] of back) s.demand.remove(units, now);
  }

  /** The pool that holds `at`; moves on to the renewed one once the current has ended. */
  private poolAt(at: number): LeaseWindow | null {
    return this.pools.holding(at, this.io.now());
  }

  private addUsage(batch: UsageBatch): void {
    this.usage.add(batch);
    if (this.usage.rowCount > MAX_USAGE_ROWS && !this.inFlight) {
      this.rootCall(null, this.io.now()).catch(() => {});
    }
  }

  private takeUsage(): UsageBatch | null {
    return this.usage.take();
  }

  private takeCalls(): BrokerCalls {
    const calls = this.calls;
    this.calls = { acquires: 0, renewals: 0 };
    return calls;
  }
}

/** Adds `by` to a count kept by key. */
function addCount(counts: Map<string, number>, key: string, by: number): void {
  counts.set(key, (counts.get(key) ?? 0) + by);
}

/** Takes `by` off a count kept by key; at zero the key goes, so idle scopes leave nothing behind. */
function takeCount(counts: Map<string, number>, key: string, by: number): void {
  const left = (counts.get(key) ?? 0) - by;
  if (left > 0) counts.set(key, left);
  else counts.delete(key);
}

/**
 * A meter that was full when last heard counts as full a moment longer, though its
 * time has come, while a call passed through asks the root about it.
 */
function dueNowStillFull(now: number): (grant: MeterGrant) => MeterGrant {
  return (g) =>
    g.fitsAgainAt !== null && g.fitsAgainAt <= now ? { ...g, fitsAgainAt: now + 1 } : g;
}

/** The grant an isolate sees: its lease, and what nobody holds plus what the pool still has. */
function onward(held: Held, leased: number): MeterGrant {
  const remaining = remainingWith(held);
  return {
    ...held.grant,
    leased,
    remaining,
    fitsAgainAt: remaining >= 1 ? null : held.grant.fitsAgainAt,
  };
}

/**
 * Isolates' usage waiting for the broker's next root call, appended as it comes (a
 * hot broker takes hundreds of calls a second: nothing is copied or sorted per call).
 * The root keeps the newest RECENT_KEPT requests of each kind: so does this.
 */
class PendingUsage {
  private rows: UsageRow[] = [];
  private refusals: RefusalRow[] = [];
  private keyRejections: KeyRejectionRow[] = [];
  private spent: SpentRow[] = [];
  private minutes: MinuteRow[] = [];
  private readonly requests = new RequestSample(RECENT_KEPT);

  add(batch: UsageBatch): void {
    for (const r of batch.rows) this.rows.push(r);
    for (const r of batch.refusals) this.refusals.push(r);
    for (const r of batch.keyRejections ?? []) this.keyRejections.push(r);
    for (const r of batch.requests ?? []) this.requests.add(r);
    for (const r of batch.spent ?? []) this.spent.push(r);
    for (const r of batch.minutes ?? []) this.minutes.push(r);
  }

  get rowCount(): number {
    return this.rows.length;
  }

  /** The whole backlog as one batch, emptied out; null when nothing waits. */
  take(): UsageBatch | null {
    const held =
      this.rows.length + this.refusals.length + this.keyRejections.length + this.requests.size;
    if (held === 0) return null;
    const batch: UsageBatch = {
      rows: this.rows,
      refusals: this.refusals,
      ...(this.keyRejections.length > 0 ? { keyRejections: this.keyRejections } : {}),
      ...(this.requests.size > 0 ? { requests: this.requests.take() } : {}),
      ...(this.spent.length > 0 ? { spent: this.spent } : {}),
      ...(this.minutes.length > 0 ? { minutes: this.minutes } : {}),
    };
    this.rows = [];
    this.refusals = [];
    this.keyRejections = [];
    this.spent = [];
    this.minutes = [];
    return batch;
  }
}
