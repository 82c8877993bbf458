/**
 * The part of a tenant's TenantGuard that counts, leases and refuses (docs/LIMITS.md):
 * `acquire` (metering/lease-protocol.ts) refuses or admits the waiting requests' costs
 * and leases units the caller may admit on its own until the lease ends, counting them
 * as used at once; it keeps the tenant's own limits and its plan's, the calls answered,
 * and the regional brokers holding a lease, which it tells of every operator change.
 * A Durable Object runs one call at a time and SQLite calls are synchronous, so
 * check-and-count is atomic: N concurrent requests against a limit L let exactly L
 * through, whatever the number of isolates. Pure apart from its storage and TenantIo,
 * so the fleet simulation (scripts/sim/) runs this very code on node:sqlite, with
 * simulated time. Its tables: `slots`, `stats`, `lease_holders`; its settings:
 * `limits`, `plan`.
 */
import {
  type BrokerPush,
  BUSY_WANT,
  type LeaseAnswer,
  type LeaseRequest,
  type MeterGrant,
  type Refusal,
  type Returned,
  type ScopeGrant,
} from '../../../metering/lease-protocol';
import { meterState, secondsUntil } from '../../../metering/meter-state';
import { type Limits, type Meter, type MeterOptions, metersFor } from '../../../metering/policy';
import type { UsageBatch } from '../../../metering/usage';
import { OPERATION_GROUPS } from '../../../operations/groups';
import type { MeterState, TenantUsage } from '../../../types/wire';
import type { AlertsPart } from '../alerts/alerts-part';
import type { HistoryPart } from '../history/history-part';
import type { HistoryQuery } from '../history/rollups';
import type { TenantIo } from '../io';
import { type Chores, SWEEP_EVERY_MS } from '../part';
import type { PlanPush } from '../plan-protocol';
import type { TenantStandingReader } from '../record/tenant-standing';
import type { SettingsView } from '../settings';
import type { Sql } from '../sql';
import type { TokenStandingReader } from '../tokens/token-standing';
import { BrokerWants } from './broker-wants';
import { alignToScopes, unpoolable } from './lease-shares';
import { Ledger } from './ledger';
import { LimitStore, sqlLedgerStorage } from './limit-store';
import { slotAt, windowSeconds } from './slots';

/** An isolate's lease never takes more than this share of what is left of a meter. */
export const LEASE_SHARE = 1 / 8;

const NO_OPTIONS: MeterOptions = { partitionShare: 1, largestCost: 1 };

/** What callers reach: isolates' and brokers' lease calls, usage views, operator limits, plans. */
export const LIMITS_CALLS = [
  'acquire',
  'record',
  'usage',
  'ownView',
  'setLimits',
  'applyPlan',
] as const;

/** What the limits part needs beside its tables. */
export interface LimitsDeps {
  settings: SettingsView<'limits' | 'plan'>;
  /** Token ends, own limits and lines (the tokens part). */
  tokens: TokenStandingReader;
  /** The disabled flag and cache version (the tenant-record part). */
  tenant: TenantStandingReader;
  /** Quota crossings (the alerts part). */
  alerts: Pick<AlertsPart, 'watchesQuotas' | 'noteQuotas'>;
  /** A token's own view reads its history (the history part). */
  history: Pick<HistoryPart, 'query' | 'refusalsByOperation'>;
  /** A usage batch an isolate gathered, for the parts that keep it. */
  takeUsage(batch: UsageBatch, retentionDays?: number): void;
  io: Pick<TenantIo, 'now' | 'wakeBy' | 'sendToBroker'>;
}

export class LimitsPart implements Chores {
  private readonly store: LimitStore;
  private readonly ledger: Ledger;
  private readonly brokerWants = new BrokerWants();
  /** The DEFAULT_LIMITS the last lease call sent (record() has none of its own). */
  private defaultsSeen: Limits | undefined;

  constructor(
    sql: Sql,
    private readonly deps: LimitsDeps,
  ) {
    this.store = new LimitStore(sql, deps.settings);
    this.ledger = new Ledger(sqlLedgerStorage(sql));
  }

  /**
   * The one call isolates make: refuse or admit the waiting request, lease
   * units for the period asked for, take back unused ones, and report the
   * tenant's state (disabled, token ends, cache version).
   */
  acquire(req: LeaseRequest): LeaseAnswer {
    const now = req.now;
    this.defaultsSeen = req.defaults;
    if (req.usage) this.record(req.usage, req.usageRetentionDays);
    for (const r of req.returns) this.ledger.refund(r.meter, r.slot, r.units, now);
    const limits = this.limitsInForce(req.defaults);
    const mode = limits.limiter ?? 'leased';
    this.store.countCall(mode === 'exact' ? 'exact_admits' : req.renewal ? 'renewals' : 'acquires');
    if (req.brokerCalls) {
      this.store.countCall('broker_acquires', req.brokerCalls.acquires);
      this.store.countCall('broker_renewals', req.brokerCalls.renewals);
    }
    if (req.holder) this.store.noteHolder(req.holder, now);
    const { tokens, tenant, io } = this.deps;
    const disabled = tenant.disabled();
    const start = Math.min(Math.max(req.start, now), now + req.leaseMaxMs);

    const perScope = req.scopes.map((ask) => ({
      ask,
      // A rotated token's own meters are its line's: old and new share one budget.
      meters: metersFor(
        limits,
        tokens.limitsOf(ask.tokenId),
        { ...ask, tokenId: tokens.lineOf(ask.tokenId) },
        req.meterOptions,
      ),
      tokenEnd: tokens.endOf(ask.tokenId),
    }));
    const meters = new Map<string, Meter>();
    for (const s of perScope) for (const m of s.meters) meters.set(m.key, m);

    // The waiting requests' own costs, counted now.
    const scopes: ScopeGrant[] = perScope.map(({ ask, meters: scopeMeters, tokenEnd }) => {
      const ended = tokenEnd && now >= tokenEnd.at ? tokenEnd.reason : null;
      // Standing is checked for every waiting request, a cost-0 one included;
      // only a cost is counted.
      let refusal: Refusal | null = null;
      if (disabled) refusal = { reason: 'disabled' };
      else if (ended) refusal = { reason: ended };
      else if (ask.cost > 0) refusal = this.admitCost(scopeMeters, ask.cost, now);
      const meterKeys = scopeMeters.map((m) => m.key);
      return ask.cost > 0 && !refusal
        ? { meters: meterKeys, tokenEnd, refusal, spent: true }
        : { meters: meterKeys, tokenEnd, refusal };
    });

    // A lease holds from `start`, never past any slot end or the lease limit. In exact
    // mode nothing is leased and the answer holds for no time, unless the tenant is
    // disabled: that refusal may be repeated locally for the lease time.
    let expiresAt = now;
    if (mode === 'leased' || disabled) {
      expiresAt = now + req.leaseMaxMs;
      for (const m of meters.values()) expiresAt = Math.min(expiresAt, slotAt(m, start).end);
    }
    const leased = new Map<string, number>();
    // Meters whose share a broker has had for now: until when (broker-wants.ts).
    const spent = new Map<string, number>();
    if (mode === 'leased' && !disabled) {
      const wants = new Map<string, number>();
      perScope.forEach(({ ask, meters: scopeMeters }, i) => {
        if (scopes[i]?.refusal) return;
        for (const m of scopeMeters) wants.set(m.key, (wants.get(m.key) ?? 0) + ask.want);
      });
      // A want is for the lease asked for; a slot's end may cut the lease shorter, and
      // units it cannot use would sit idle until they came back.
      const granted = Math.min(1, (expiresAt - start) / Math.max(1, req.leaseMaxMs));
      const unpooled = req.holder ? unpoolable(perScope, scopes) : new Set<string>();
      for (const [key, asked] of wants) {
        const m = meters.get(key);
        const want = Math.ceil(asked * granted);
        if (!m || want <= 0) continue;
        const slot = slotAt(m, start);
        const left = m.limit - this.ledger.counted(m, slot, now);
        // A broker (a holder) speaks for a region: it gets a larger share, in
        // proportion to its want among all brokers' (broker-wants.ts), and all of
        // the last few units, so the meter runs dry at once and every holder learns
        // when it has room again, instead of its isolates each calling here. A
        // meter too small to pool (MIN_POOLED_LIMIT) is leased to no broker at all,
        // nor is one only scopes with such a meter count against: the broker's
        // isolates could use none of it, and it would sit counted in the pool.
        // An isolate that expects a request or more within this lease gets its share
        // rounded up, so a flood drains the last few units in a few calls, not one call
        // a unit; one expecting less gets it rounded down: a last unit it would park
        // unused is left for an isolate that asks with a request.
        const busy = asked * granted >= BUSY_WANT;
        let units = Math.min(want, (busy ? Math.ceil : Math.floor)(left * LEASE_SHARE));
        if (req.holder && unpooled.has(key)) units = 0;
        else if (req.holder) {
          const share = this.brokerWants.share(key, slot, req.holder, want, left, now);
          units = share.units;
          if (share.spentUntil !== null) spent.set(key, share.spentUntil);
        }
        if (units > 0) leased.set(key, units);
      }
      // An isolate admits a request only with a unit of every meter of its scope: units
      // of one meter beyond what its scopes' other meters allow would sit counted and
      // unused, so that meter's `used` would run ahead of the others' (a daily quota
      // showing more than its monthly one). A broker pools per meter: it keeps its share.
      if (!req.holder) alignToScopes(leased, perScope, scopes);
      for (const [key, units] of leased) {
        const m = meters.get(key);
        if (m) this.ledger.charge(m, slotAt(m, start), units, now);
      }
    }
    const grants = [...meters.values()].map((m) =>
      this.grant(m, start, now, leased.get(m.key) ?? 0, spent.get(m.key)),
    );
    this.noteQuotas([...meters.values()], now);
    this.ledger.flush();
    // Alarms run on the real clock, whatever time a caller passed in.
    io.wakeBy(io.now() + SWEEP_EVERY_MS);
    return {
      mode,
      disabled,
      cacheVersion: tenant.cacheVersion() ?? '0',
      plan: this.planName(),
      start,
      expiresAt: Math.max(expiresAt, start),
      scopes,
      meters: grants,
    };
  }

  /**
   * Usage an isolate gathered (limits/usage-buffer.ts), for the parts that keep it; with
   * the unused units of its ended leases, when it sends them without a lease call.
   */
  record(batch: UsageBatch, retentionDays?: number, returns: Returned[] = []): void {
    const { io } = this.deps;
    const now = io.now();
    for (const r of returns) this.ledger.refund(r.meter, r.slot, r.units, now);
    // Units spent arrive with the history rows of the same requests, so `used` and the
    // history move together (docs/LIMITS.md, "Counting").
    for (const s of batch.spent ?? []) this.ledger.spend(s.meter, s.slot, s.units, now);
    this.ledger.flush();
    // Quotas crossed by what was spent: the tenant's meters, as the last lease call's
    // defaults make them (an object that has had none yet notes them at its first).
    if (batch.spent?.length && this.defaultsSeen) {
      this.noteQuotas([...this.tenantMeters(this.limitsInForce(this.defaultsSeen)).values()], now);
    }
    this.deps.takeUsage(batch, retentionDays);
    io.wakeBy(now + SWEEP_EVERY_MS);
  }

  /** Checks `cost` against every meter of a scope and counts it; the refusal otherwise. */
  private admitCost(meters: Meter[], cost: number, now: number): Refusal | null {
    // A request dearer than a whole window would wait forever: say so instead.
    const never = meters.find((m) => cost > m.limit);
    if (never) return { reason: 'too_costly', violated: never.name, limit: never.limit };
    const violated = meters.filter(
      (m) => this.ledger.counted(m, slotAt(m, now), now) + cost > m.limit,
    );
    if (violated.length > 0) {
      // An exhausted quota outranks a rate window: waiting for the window would not help.
      const kind = violated.some((m) => m.kind === 'quota') ? 'quota' : 'rate';
      const fits = violated.map((m) => ({ m, at: this.ledger.fitsAgainAt(m, m.limit, cost, now) }));
      const named = fits.filter((f) => f.m.kind === kind).reduce((a, b) => (b.at > a.at ? b : a));
      // The request fits again only once every violated meter has room.
      const at = Math.max(...fits.map((f) => f.at));
      return { reason: kind, violated: named.m.name, retryAfter: secondsUntil(at, now) };
    }
    // Admitted here: spent at once (its isolate reports none of it; ScopeGrant.spent).
    for (const m of meters) this.ledger.charge(m, slotAt(m, now), cost, now, true);
    return null;
  }

  /** `spentUntil`: a broker has had its share until then, so nothing remains for it. */
  private grant(
    m: Meter,
    start: number,
    now: number,
    leased: number,
    spentUntil?: number,
  ): MeterGrant {
    const slot = slotAt(m, start);
    const remaining = Math.max(0, m.limit - this.ledger.counted(m, slot, now));
    if (spentUntil !== undefined) {
      return {
        ...this.grant(m, start, now, leased),
        remaining: 0,
        fitsAgainAt: spentUntil,
      };
    }
    return {
      key: m.key,
      name: m.name,
      kind: m.kind,
      limit: m.limit,
      window_s: windowSeconds(m, start),
      slot: slot.start,
      leased,
      remaining,
      resetAt: this.ledger.drainsAt(m, now),
      fitsAgainAt: remaining >= 1 ? null : this.ledger.fitsAgainAt(m, m.limit, 1, now),
    };
  }

  /**
   * Counters and what remains, without counting anything; with `tokenId`, that
   * token's own limits and meters too (a rotated token's are its line's, as when
   * counting). The console, the partner portal and the token's own view all read
   * this, so they show the same figures (docs/LIMITS.md, "Counting").
   */
  usage(now: number, defaults: Limits, tokenId?: string): TenantUsage {
    const own = this.store.ownLimits();
    const limits = this.limitsInForce(defaults);
    const meters = this.tenantMeters(limits);
    const { tokens } = this.deps;
    const tokenLimits = tokenId ? tokens.limitsOf(tokenId) : null;
    if (tokenId && tokenLimits) {
      const owner = tokens.lineOf(tokenId);
      const scope = { group: 'teams' as const, tokenId: owner };
      for (const m of metersFor(limits, tokenLimits, scope, NO_OPTIONS)) {
        if (m.key.startsWith(`token:${owner}:`)) meters.set(m.key, m);
      }
    }
    return {
      limits,
      custom: own !== null,
      plan: this.store.plan()?.name ?? null,
      meters: [...meters.values()].map((m) => this.shown(m, now)),
      guard_calls: { ...this.store.guardCalls() },
      ...(tokenId ? { token_limits: tokenLimits } : {}),
    };
  }

  /**
   * The tenant's meters (its policies, quotas and group quotas) by key, under `limits`.
   */
  private tenantMeters(limits: Limits): Map<string, Meter> {
    const groups = OPERATION_GROUPS.filter((g) => limits.quota.groups?.[g]);
    const meters = new Map<string, Meter>();
    for (const group of ['teams' as const, ...groups]) {
      for (const m of metersFor(limits, null, { group, tokenId: '' }, NO_OPTIONS)) {
        meters.set(m.key, m);
      }
    }
    return meters;
  }

  /**
   * A meter as the views show it: `used`, the units admitted requests spent; `reserved`,
   * the units counted beyond them, leased to isolates and brokers and not yet spent or
   * given back (or spent and not yet reported); `remaining`, what the limiter would still
   * admit (docs/LIMITS.md, "Counting").
   */
  private shown(m: Meter, now: number): MeterState {
    const slot = slotAt(m, now);
    const counted = this.ledger.counted(m, slot, now);
    const spent = this.ledger.spentIn(m, slot, now);
    return {
      ...meterState(this.grant(m, now, now, 0), now),
      used: spent,
      reserved: Math.max(0, counted - spent),
    };
  }

  /**
   * A token's own view in one call: the meters now (the token's own too), and for each
   * range its history and its refusals by operation.
   */
  ownView(now: number, defaults: Limits, tokenId: string, queries: HistoryQuery[]) {
    const { history } = this.deps;
    return {
      usage: this.usage(now, defaults, tokenId),
      history: queries.map((q) => ({
        ...history.query(q),
        byOperation: history.refusalsByOperation(q.from, q.to),
      })),
    };
  }

  /** The tenant's own limits (null: its plan's, or the defaults); the limits now in force. */
  async setLimits(limits: Limits | null, defaults: Limits): Promise<Limits> {
    this.store.putOwnLimits(limits);
    await this.tellBrokers({ kind: 'reset' });
    return this.limitsInForce(defaults);
  }

  /**
   * A plan decision of the PlanBook (plan-protocol.ts), kept when it is newer than the
   * last one kept; the brokers hear of it when it may change the limits in force (the
   * tenant has no own limits).
   */
  async applyPlan(push: PlanPush): Promise<void> {
    const kept = this.store.plan();
    if (kept && push.version <= kept.version) return;
    this.store.putPlan(push);
    if (this.store.ownLimits() === null) await this.tellBrokers({ kind: 'reset' });
  }

  /** The plan the tenant is on (null: none), for its usage events. */
  planName(): string | null {
    return this.store.plan()?.name ?? null;
  }

  /** Brokers that may hold a lease now: they are told of operator changes. */
  leaseHolders(now: number): string[] {
    return this.store.activeHolders(now);
  }

  /** Slot rows that no longer count, brokers gone quiet. */
  sweep(now: number): void {
    this.brokerWants.sweep(now);
    this.store.sweepSlots(now);
    this.ledger.sweep(now);
  }

  /**
   * Pushes an operator change to every regional broker holding a lease
   * (objects/broker/broker.ts), before the change is answered: each applies it (or, for new
   * limits, drops what it knew), so the change holds everywhere once isolates'
   * own leases (LEASE_MAX_MS) end.
   * A broker that cannot be reached holds its pool no longer than
   * BROKER_LEASE_MS (docs/LIMITS.md, "Hierarchical leases").
   */
  async tellBrokers(change: BrokerPush): Promise<void> {
    const { io } = this.deps;
    const holders = this.leaseHolders(io.now());
    await Promise.allSettled(holders.map((name) => io.sendToBroker(name, change)));
  }

  /** The limits that count: the tenant's own, else its plan's, else the defaults. */
  private limitsInForce(defaults: Limits): Limits {
    return this.store.ownLimits() ?? this.store.plan()?.limits ?? defaults;
  }

  /** Tells the alerts part the use of each quota counted, when it watches them. */
  private noteQuotas(meters: Meter[], now: number): void {
    const { alerts } = this.deps;
    if (!alerts.watchesQuotas()) return;
    const uses = meters
      .filter((m) => m.kind === 'quota')
      .map((m) => {
        const slot = slotAt(m, now);
        // What was spent, never what is merely leased: an alert says what was used.
        const used = this.ledger.spentIn(m, slot, now);
        return {
          meter: m.key,
          policy: m.name,
          used,
          limit: m.limit,
          periodStart: slot.start,
          periodEnd: slot.end,
        };
      });
    alerts.noteQuotas(uses, now);
  }
}
