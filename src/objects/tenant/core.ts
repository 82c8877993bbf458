/**
 * What a TenantGuard does, without its Durable Object shell (tenant-guard.ts):
 * counting, leasing and refusing over the SQL storage it is given, token
 * states, limits and settings. Pure apart from that storage and `wakeBy` (the
 * shell's alarm), so the fleet simulation (scripts/sim/) runs this very code
 * on node:sqlite, with simulated time.
 *
 * `acquire` (metering/lease-protocol.ts) refuses or admits the waiting request's cost
 * and leases units the caller may admit on its own until the lease ends,
 * counting them as used at once. A Durable Object runs one call at a time and
 * SQLite calls are synchronous, so check-and-count is atomic: N concurrent
 * requests against a limit L let exactly L through, whatever the number of
 * isolates.
 */

import {
  type BrokerPush,
  BUSY_WANT,
  type LeaseAnswer,
  type LeaseRequest,
  type MeterGrant,
  MIN_POOLED_LIMIT,
  type Refusal,
  type Returned,
  type ScopeGrant,
} from '../../metering/lease-protocol';
import { meterState, secondsUntil } from '../../metering/meter-state';
import {
  type Limits,
  limitsSchema,
  type Meter,
  type MeterOptions,
  metersFor,
} from '../../metering/policy';
import type { UsageBatch } from '../../metering/usage';
import { ROUTE_GROUPS } from '../../routes/types';
import type { TenantUsage } from '../../types/wire';
import { AlertsPart } from './alerts/alerts-part';
import { BrokerWants } from './broker-wants';
import { HistoryPart } from './history/history-part';
import { IdempotencyPart } from './idempotency/idempotency-part';
import type { TenantIo } from './io';
import { Ledger } from './ledger';
import { SWEEP_EVERY_MS } from './part';
import type { PlanPush } from './plan-protocol';
import { RecentRequestsPart } from './recent/recent-requests-part';
import { TenantRecordPart } from './record/tenant-record-part';
import { TenantStanding } from './record/tenant-standing';
import { Settings } from './settings';
import { slotAt, windowSeconds } from './slots';
import type { Sql } from './sql';
import { GuardStore, sqlLedgerStorage } from './store';
import { TokenStanding } from './tokens/token-standing';
import { TokensPart } from './tokens/tokens-part';

/** An isolate's lease never takes more than this share of what is left of a meter. */
export const LEASE_SHARE = 1 / 8;

const NO_OPTIONS: MeterOptions = { partitionShare: 1, largestCost: 1 };

export class GuardCore {
  private readonly store: GuardStore;
  private readonly ledger: Ledger;
  private readonly brokerWants = new BrokerWants();
  /** What admission reads of the tenant's tokens (tokens/token-standing.ts). */
  readonly standing: TokenStanding;
  /** The tenant's tokens (tokens/tokens-part.ts). */
  readonly tokens: TokensPart;
  /** The disabled flag and cache version (record/tenant-standing.ts). */
  readonly tenantStanding: TenantStanding;
  /** The tenant's KV record and what follows it (record/tenant-record-part.ts). */
  readonly tenantRecord: TenantRecordPart;
  /** The tenant's recent requests (recent/recent-requests.ts). */
  readonly recent: RecentRequestsPart;
  /** The tenant's usage history (history/history-part.ts). */
  readonly history: HistoryPart;
  /** The idempotency keys of the tenant's writes (idempotency/idempotency-part.ts). */
  readonly idempotency: IdempotencyPart;
  /** The tenant's alerts (alerts/alerts-part.ts). */
  readonly alerts: AlertsPart;

  private readonly wakeBy: (at: number) => void;

  /** `io`: what the guard reaches beyond its SQLite (io.ts). */
  constructor(
    sql: Sql,
    private readonly io: TenantIo,
  ) {
    this.wakeBy = (at) => io.wakeBy(at);
    const settings = new Settings(sql);
    this.store = new GuardStore(sql, settings);
    this.ledger = new Ledger(sqlLedgerStorage(sql));
    this.history = new HistoryPart(sql, settings, io);
    this.alerts = new AlertsPart(sql, this.history, io);
    this.recent = new RecentRequestsPart(sql, io.now);
    this.standing = new TokenStanding(sql);
    this.idempotency = new IdempotencyPart(sql, (id) => this.standing.lineOf(id), io);
    this.tokens = new TokensPart(sql, {
      settings,
      standing: this.standing,
      io,
      tellBrokers: (push) => this.tellBrokers(push),
      lastUsedHour: (id) => this.history.lastUsedHour(id),
    });
    this.tenantStanding = new TenantStanding(settings);
    this.tenantRecord = new TenantRecordPart(sql, {
      standing: this.tenantStanding,
      io,
      tellBrokers: (push) => this.tellBrokers(push),
    });
  }

  /**
   * The one call isolates make: refuse or admit the waiting request, lease
   * units for the period asked for, take back unused ones, and report the
   * tenant's state (disabled, token ends, cache version).
   */
  acquire(req: LeaseRequest): LeaseAnswer {
    const now = req.now;
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
    const disabled = this.tenantStanding.disabled();
    const start = Math.min(Math.max(req.start, now), now + req.leaseMaxMs);

    const perScope = req.scopes.map((ask) => ({
      ask,
      // A rotated token's own meters are its line's: old and new share one budget.
      meters: metersFor(
        limits,
        this.standing.limitsOf(ask.tokenId),
        { ...ask, tokenId: this.standing.lineOf(ask.tokenId) },
        req.meterOptions,
      ),
      tokenEnd: this.standing.endOf(ask.tokenId),
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
      return { meters: scopeMeters.map((m) => m.key), tokenEnd, refusal };
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
    this.noteQuotaAlerts([...meters.values()], now);
    this.ledger.flush();
    // Alarms run on the real clock, whatever time a caller passed in.
    this.wakeBy(this.io.now() + SWEEP_EVERY_MS);
    return {
      mode,
      disabled,
      cacheVersion: this.tenantStanding.cacheVersion() ?? '0',
      start,
      expiresAt: Math.max(expiresAt, start),
      scopes,
      meters: grants,
    };
  }

  /**
   * Usage an isolate gathered (limits/usage-buffer.ts): added to the hourly rollups; with the
   * unused units of its ended leases, when it sends them without a lease call.
   */
  record(batch: UsageBatch, retentionDays?: number, returns: Returned[] = []): void {
    if (returns.length > 0) {
      for (const r of returns) this.ledger.refund(r.meter, r.slot, r.units, this.io.now());
      this.ledger.flush();
    }
    this.history.take(batch, retentionDays);
    if (batch.requests) this.recent.take(batch.requests);
    this.alerts.noteBatch(batch);
    this.wakeBy(this.io.now() + SWEEP_EVERY_MS);
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
    for (const m of meters) this.ledger.charge(m, slotAt(m, now), cost, now);
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
    const groups = ROUTE_GROUPS.filter((g) => limits.quota.groups?.[g]);
    const meters = new Map<string, Meter>();
    for (const group of ['teams' as const, ...groups]) {
      for (const m of metersFor(limits, null, { group, tokenId: '' }, NO_OPTIONS)) {
        meters.set(m.key, m);
      }
    }
    const tokenLimits = tokenId ? this.standing.limitsOf(tokenId) : null;
    if (tokenId && tokenLimits) {
      const owner = this.standing.lineOf(tokenId);
      const scope = { group: 'teams' as const, tokenId: owner };
      for (const m of metersFor(limits, tokenLimits, scope, NO_OPTIONS)) {
        if (m.key.startsWith(`token:${owner}:`)) meters.set(m.key, m);
      }
    }
    return {
      limits,
      custom: own !== null,
      plan: this.store.plan()?.name ?? null,
      meters: [...meters.values()].map((m) => meterState(this.grant(m, now, now, 0), now)),
      guard_calls: { ...this.store.guardCalls() },
      ...(tokenId ? { token_limits: tokenLimits } : {}),
    };
  }

  /** Replaces the tenant's own limits; `null` returns it to its plan's, or the defaults. */
  setLimits(limits: Limits | null): void {
    this.store.putSetting('limits', limits && JSON.stringify(limitsSchema.parse(limits)));
  }

  /** The limits that count: the tenant's own, else its plan's, else the defaults. */
  limitsInForce(defaults: Limits): Limits {
    return this.store.ownLimits() ?? this.store.plan()?.limits ?? defaults;
  }

  /**
   * A plan decision of the PlanBook (plan-protocol.ts), kept when it is newer than the
   * last one kept. True when it may change the limits in force (the tenant has no own
   * limits), so the shell tells the brokers.
   */
  applyPlan(push: PlanPush): boolean {
    const kept = this.store.plan();
    if (kept && push.version <= kept.version) return false;
    const limits = push.limits && limitsSchema.parse(push.limits);
    this.store.putSetting('plan', JSON.stringify({ ...push, limits }));
    return this.store.ownLimits() === null;
  }

  /** Brokers that may hold a lease now: the shell tells them of operator changes. */
  leaseHolders(now: number): string[] {
    return this.store.activeHolders(now);
  }

  /**
   * From now on, every request with this token is refused, on every isolate.
   * Like every operator change here, it returns what to push to the brokers.
   */
  revoke(tokenId: string, now: number): BrokerPush {
    this.standing.revoke(tokenId, now);
    return this.standing.pushOf(tokenId);
  }

  /** A disabled (or deleted) tenant is refused at once, whatever KV still says. */
  setDisabled(disabled: boolean): BrokerPush {
    return this.tenantStanding.setDisabled(disabled);
  }

  /** The alarm's storage work: rows that no longer count and history past its retention. */
  sweep(now: number): void {
    this.brokerWants.sweep(now);
    this.store.sweepSlots(now);
    this.ledger.sweep(now);
    this.history.sweep(now);
    this.recent.sweep(now);
    this.alerts.sweep(now);
    this.idempotency.sweep(now);
    this.tokens.sweep(now);
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
    const holders = this.leaseHolders(this.io.now());
    await Promise.allSettled(holders.map((name) => this.io.sendToBroker(name, change)));
  }

  /** Tells the alerts part the use of each quota counted, when it watches them. */
  private noteQuotaAlerts(meters: Meter[], now: number): void {
    if (!this.alerts.watchesQuotas()) return;
    const uses = meters
      .filter((m) => m.kind === 'quota')
      .map((m) => {
        const slot = slotAt(m, now);
        const used = this.ledger.counted(m, slot, now);
        return {
          meter: m.key,
          policy: m.name,
          used,
          limit: m.limit,
          periodStart: slot.start,
          periodEnd: slot.end,
        };
      });
    this.alerts.noteQuotas(uses, now);
  }
}

/**
 * Lowers each meter's lease to what the scopes that count against it can use: a
 * scope can use as many units as the least leased of its meters.
 */
function alignToScopes(
  leased: Map<string, number>,
  perScope: { meters: Meter[] }[],
  scopes: ScopeGrant[],
): void {
  const usable = new Map<string, number>();
  perScope.forEach(({ meters }, i) => {
    if (scopes[i]?.refusal) return;
    const least = Math.min(...meters.map((m) => leased.get(m.key) ?? 0));
    for (const m of meters) usable.set(m.key, Math.max(usable.get(m.key) ?? 0, least));
  });
  for (const [key, units] of leased) {
    const kept = Math.min(units, usable.get(key) ?? 0);
    if (kept > 0) leased.set(key, kept);
    else leased.delete(key);
  }
}

/**
 * Meters a broker gets nothing of: those too small to pool, and those that only
 * scopes holding such a meter count against.
 */
function unpoolable(perScope: { meters: Meter[] }[], scopes: ScopeGrant[]): Set<string> {
  const pooled = new Set<string>();
  const all = new Set<string>();
  perScope.forEach(({ meters }, i) => {
    for (const m of meters) all.add(m.key);
    if (scopes[i]?.refusal || meters.some((m) => m.limit < MIN_POOLED_LIMIT)) return;
    for (const m of meters) pooled.add(m.key);
  });
  return new Set([...all].filter((key) => !pooled.has(key)));
}
