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
} from '../metering/lease-protocol';
import { meterState, secondsUntil } from '../metering/meter-state';
import {
  type Limits,
  limitsSchema,
  type Meter,
  type MeterOptions,
  metersFor,
  type TokenLimits,
} from '../metering/policy';
import { DEFAULT_USAGE_RETENTION_DAYS, HOUR_MS, hourOf, type UsageBatch } from '../metering/usage';
import { ROUTE_GROUPS } from '../routes/types';
import type { TokenEntry } from '../tenants/token-store';
import type { AlertSettings, RecentAlert, TenantUsage, TokenListing } from '../types/wire';
import {
  type AlertConfig,
  migrateAlerts,
  noteQuotaUse,
  readAlertConfig,
  recentAlerts,
  sweepAlertsSent,
  writeAlertConfig,
} from './alerts';
import { BrokerWants } from './broker-wants';
import {
  type FleetHour,
  hourFigures,
  migrateHealth,
  noteHealthAlerts,
  recordKeyRejections,
  sweepHealth,
} from './health';
import {
  type History,
  type HistoryQuery,
  lastUsedHour,
  migrateHistory,
  queryHistory,
  recordHistory,
  refusalsByOperation,
  sweepHistory,
} from './history';
import {
  type Claim,
  type ClaimRequest,
  claimIdempotency,
  type KeyOwner,
  migrateIdempotency,
  releaseIdempotency,
  type StoredAnswer,
  scopedKey,
  settleIdempotency,
  sweepIdempotency,
} from './idempotency';
import { Ledger } from './ledger';
import type { PlanPush } from './plan-protocol';
import {
  migrateRecentRequests,
  queryRecentRequests,
  type RecentQuery,
  recordRecentRequests,
  sweepRecentRequests,
} from './recent-requests';
import { slotAt, windowSeconds } from './slots';
import type { Sql } from './sql';
import { GuardStore, sqlLedgerStorage } from './store';
import { TokenChanges } from './token-changes';
import { migrateTokens, TokenRegistry } from './token-registry';

/** An isolate's lease never takes more than this share of what is left of a meter. */
export const LEASE_SHARE = 1 / 8;

/** How often rows that no longer count are swept away (docs/STORAGE.md). */
export const SWEEP_EVERY_MS = HOUR_MS;
const NO_OPTIONS: MeterOptions = { partitionShare: 1, largestCost: 1 };

export class GuardCore {
  private readonly store: GuardStore;
  private readonly ledger: Ledger;
  private alerts: AlertConfig | null | undefined;
  private readonly brokerWants = new BrokerWants();
  /** The tenant's tokens as decided here (token-registry.ts), and what KV and the audit log lack. */
  readonly tokens: TokenRegistry;
  /** Issue, rotation, revocation and own limits of the tenant's tokens (token-changes.ts). */
  readonly tokenChanges: TokenChanges;

  /**
   * `wakeBy(at)`: the shell makes sure its alarm fires by `at` (real clock). `tenantId`:
   * the tenant this guard is of, when the shell knows it (its name), for the alerts it raises.
   */
  constructor(
    private readonly sql: Sql,
    private readonly wakeBy: (at: number) => void,
    private readonly tenantId: string | null = null,
  ) {
    this.store = new GuardStore(sql);
    this.ledger = new Ledger(sqlLedgerStorage(sql));
    migrateHistory(sql);
    migrateAlerts(sql);
    migrateHealth(sql);
    migrateRecentRequests(sql);
    migrateIdempotency(sql);
    migrateTokens(sql);
    this.tokens = new TokenRegistry(sql);
    this.tokenChanges = new TokenChanges(this.tokens, this.store);
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
    const disabled = this.store.setting('disabled') === 'true';
    const start = Math.min(Math.max(req.start, now), now + req.leaseMaxMs);

    const perScope = req.scopes.map((ask) => ({
      ask,
      // A rotated token's own meters are its line's: old and new share one budget.
      meters: metersFor(
        limits,
        this.store.tokenLimits(ask.tokenId),
        { ...ask, tokenId: this.store.meterOwner(ask.tokenId) },
        req.meterOptions,
      ),
      tokenEnd: this.store.tokenEnd(ask.tokenId),
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
    this.wakeBy(Date.now() + SWEEP_EVERY_MS);
    return {
      mode,
      disabled,
      cacheVersion: this.store.setting('cache_version') ?? '0',
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
      for (const r of returns) this.ledger.refund(r.meter, r.slot, r.units, Date.now());
      this.ledger.flush();
    }
    recordHistory(this.sql, batch);
    if (batch.keyRejections) recordKeyRejections(this.sql, batch.keyRejections);
    if (batch.requests) recordRecentRequests(this.sql, batch.requests);
    // A batch can raise a health alert for the hours it has failures in (the one before
    // this, too, just past the hour), or for this hour when it had some (its requests
    // may just have reached the minimum); other batches cost no query.
    const now = Date.now();
    const hour = hourOf(now);
    const hours = new Set<number>();
    for (const r of batch.keyRejections ?? []) hours.add(r.hour);
    for (const r of batch.rows) if (r.status === '5xx') hours.add(r.hour);
    if (hours.size > 0) this.failingHour = hour;
    // Unknown after a restart: looked at once.
    if (this.failingHour === undefined || this.failingHour === hour) {
      this.failingHour ??= null;
      hours.add(hour);
    }
    if (hours.size > 0) this.noteHealth(hours, now);
    if (
      retentionDays !== undefined &&
      String(retentionDays) !== this.store.setting('retention_days')
    ) {
      this.store.putSetting('retention_days', String(retentionDays));
    }
    this.wakeBy(Date.now() + SWEEP_EVERY_MS);
  }

  /**
   * The tenant's tokens for the operator, oldest first, each with its own limits and
   * its last use (the hour, from the usage history).
   */
  listTokens(now: number): TokenListing[] {
    return this.tokenChanges.list(now).map((t) => {
      const hour = lastUsedHour(this.sql, t.id);
      return { ...t, last_used_at: hour === null ? null : new Date(hour).toISOString() };
    });
  }

  /** The hour (its start, ms) of the last batch with failures; undefined until one came in. */
  private failingHour: number | null | undefined = undefined;

  /**
   * Raises the alerts beyond quotas of these hours (health.ts), now that a batch came in;
   * the alarm delivers them.
   */
  private noteHealth(hours: Iterable<number>, now: number): void {
    const config = this.alertConfig();
    const tenantId = this.tenantId ?? config?.tenantId;
    if (!tenantId) return;
    if (noteHealthAlerts(this.sql, tenantId, config, hours, now)) this.wakeBy(Date.now());
  }

  /** The tenant's figures by hour since `from`, for its fleet board (health.ts). */
  fleetHours(from: number): FleetHour[] {
    return hourFigures(this.sql, from);
  }

  /** The tenant's recent requests, newest first (recent-requests.ts). */
  recentRequests(q: RecentQuery) {
    return queryRecentRequests(this.sql, q, Date.now());
  }

  /** The alert log, newest first (alerts.ts). */
  recentAlerts(): RecentAlert[] {
    return recentAlerts(this.sql);
  }

  /** Refusals by the operation refused, between `from` and `to`. */
  refusalsByOperation(from: number, to: number) {
    return refusalsByOperation(this.sql, from, to);
  }

  /** Usage history series for the operator API and the tenant's own view. */
  history(q: HistoryQuery): History {
    return queryHistory(this.sql, q);
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
    const tokenLimits = tokenId ? this.store.tokenLimits(tokenId) : null;
    if (tokenId && tokenLimits) {
      const owner = this.store.meterOwner(tokenId);
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

  /** A token's own limits, or null. */
  tokenLimits(tokenId: string): TokenLimits | null {
    return this.store.tokenLimits(tokenId);
  }

  /** Part of every cache key of this tenant; a new value orphans every old entry. */
  setCacheVersion(version: string): BrokerPush {
    this.store.putSetting('cache_version', version);
    return { kind: 'cache', version };
  }

  cacheVersion(): string | null {
    return this.store.setting('cache_version');
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
    this.store.revoke(tokenId, now);
    return this.tokenPush(tokenId);
  }

  /** The token is refused from `at` on (rotation's overlap end); revocation wins. */
  expireAt(tokenId: string, at: number): BrokerPush {
    this.store.expireAt(tokenId, at);
    return this.tokenPush(tokenId);
  }

  /** A disabled (or deleted) tenant is refused at once, whatever KV still says. */
  setDisabled(disabled: boolean): BrokerPush {
    this.store.putSetting('disabled', String(disabled));
    return disabled ? { kind: 'disabled' } : { kind: 'reset' };
  }

  private tokenPush(tokenId: string): BrokerPush {
    const end = this.store.tokenEnd(tokenId);
    return end ? { kind: 'token', tokenId, end } : { kind: 'reset' };
  }

  /** The alarm's storage work: rows that no longer count and history past its retention. */
  sweep(now: number): void {
    this.brokerWants.sweep(now);
    this.store.sweepSlots(now);
    this.ledger.sweep(now);
    const days = Number(this.store.setting('retention_days') ?? DEFAULT_USAGE_RETENTION_DAYS);
    sweepHistory(this.sql, now - days * 86_400_000);
    sweepHealth(this.sql, now - days * 86_400_000);
    sweepRecentRequests(this.sql, now);
    sweepAlertsSent(this.sql, now);
    sweepIdempotency(this.sql, now);
    this.tokens.sweep(now);
  }

  /**
   * Takes in the tokens KV held before this guard decided its tenant's tokens (once per
   * tenant): a rotated token's family is the line whose meters it shares.
   */
  adoptTokens(entries: TokenEntry[]): void {
    this.tokens.adopt(
      entries,
      (id) => this.store.meterOwner(id),
      (id) => this.store.tokenEnd(id),
    );
    this.store.putSetting('tokens_adopted', 'true');
  }

  /** Whether the tokens KV held before have been taken in. */
  tokensAdopted(): boolean {
    return this.store.setting('tokens_adopted') === 'true';
  }

  /** Claims an idempotency key of its owner for a write, or says why not (idempotency.ts). */
  claimIdempotency(req: ClaimRequest): Claim {
    const claim = claimIdempotency(this.sql, { ...req, key: this.ownedKey(req.key, req) });
    if (claim.kind === 'claimed') this.wakeBy(Date.now() + SWEEP_EVERY_MS);
    return claim;
  }

  settleIdempotency(
    key: string,
    owner: KeyOwner,
    fingerprint: string,
    answer: StoredAnswer,
    now: number,
  ): void {
    settleIdempotency(this.sql, this.ownedKey(key, owner), fingerprint, answer, now);
  }

  releaseIdempotency(key: string, owner: KeyOwner, fingerprint: string): void {
    releaseIdempotency(this.sql, this.ownedKey(key, owner), fingerprint);
  }

  private ownedKey(key: string, owner: KeyOwner): string {
    return scopedKey(key, owner, this.store.meterOwner(owner.tokenId));
  }

  /** Sets the quota alert webhook (thresholds in percent); null removes it. */
  setAlerts(config: AlertConfig | null): void {
    writeAlertConfig(this.sql, config);
    this.alerts = undefined;
  }

  /** The webhook and thresholds, without the signing secret. */
  alertSettings(): AlertSettings | null {
    const config = this.alertConfig();
    return (
      config && {
        url: config.url,
        thresholds: config.thresholds,
        server_error_percent: config.serverErrorPercent,
      }
    );
  }

  /**
   * Raises alerts for the quotas whose use has crossed a threshold (alerts.ts): into the
   * alert log the console shows, webhook or not (without one, at the default thresholds),
   * and with one into its outbox.
   */
  private noteQuotaAlerts(meters: Meter[], now: number): void {
    const config = this.alertConfig();
    const tenantId = this.tenantId ?? config?.tenantId;
    if (!tenantId) return;
    for (const m of meters) {
      if (m.kind !== 'quota') continue;
      const slot = slotAt(m, now);
      const used = this.ledger.counted(m, slot, now);
      const quota = { meter: m.key, policy: m.name, used, limit: m.limit };
      const due = noteQuotaUse(
        this.sql,
        tenantId,
        config,
        { ...quota, periodStart: slot.start, periodEnd: slot.end },
        now,
      );
      // Alarms run on the real clock, whatever time a caller passed in.
      if (due !== null && config) this.wakeBy(Date.now());
    }
  }

  /** The webhook, its thresholds and its sealed secret, or null. */
  alertConfig(): AlertConfig | null {
    if (this.alerts === undefined) this.alerts = readAlertConfig(this.sql);
    return this.alerts;
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
