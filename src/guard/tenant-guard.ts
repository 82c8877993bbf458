/**
 * src/guard/ is what a tenant's TenantGuard hosts, and what it tells isolates:
 * - TenantGuard (this file): one SQLite-backed Durable Object per tenant, the
 *   single writer of its counters, leases, token states, cache version and
 *   settings;
 * - its storage: store.ts (settings, token states), ledger.ts and slots.ts
 *   (units counted per meter and window), history.ts (usage history),
 *   alerts.ts (quota alerts, sent from its alarm);
 * - its terms: policy.ts (the limits and the meters it counts), and what
 *   isolates and the guard say to each other (lease-protocol.ts, verdict.ts,
 *   usage.ts).
 * The isolate's side, which calls it, is src/limits/; nothing here imports it
 * (docs/ARCHITECTURE.md).
 *
 * Isolates call `acquire` (lease-protocol.ts): the guard refuses or
 * admits the waiting request's cost, and leases units the isolate may admit
 * on its own until the lease ends, counting them as used at once. A Durable
 * Object runs one call at a time and SQLite calls are synchronous, so
 * check-and-count is atomic: N concurrent requests against a limit L let
 * exactly L through, whatever the number of isolates.
 */
import { DurableObject } from 'cloudflare:workers';
import { auditLog } from '../audit/log';
import { ROUTE_GROUPS } from '../routes/types';
import { isSealed, keyRing, open, seal, sealedKid } from '../tenants/crypto';
import {
  type AlertConfig,
  type DeliveryResult,
  deliverDue,
  migrateAlerts,
  noteQuotaUse,
  readAlertConfig,
  sweepAlertsSent,
  writeAlertConfig,
} from './alerts';
import {
  type History,
  type HistoryQuery,
  migrateHistory,
  queryHistory,
  recordHistory,
  sweepHistory,
} from './history';
import type { LeaseAnswer, LeaseRequest, MeterGrant, Refusal, ScopeGrant } from './lease-protocol';
import { Ledger } from './ledger';
import {
  type Limits,
  limitsSchema,
  type Meter,
  type MeterOptions,
  metersFor,
  type TokenLimits,
} from './policy';
import { slotAt, windowSeconds } from './slots';
import { type GuardCalls, GuardStore, sqlLedgerStorage } from './store';
import type { UsageBatch } from './usage';
import {
  type AdmitRequest,
  type MeterState,
  meterState,
  secondsUntil,
  type Verdict,
} from './verdict';

/** A lease never takes more than this share of what is left of a meter. */
export const LEASE_SHARE = 1 / 8;

/** The TenantGuard of one tenant. */
export function guardFor(
  env: { TENANT_GUARD: DurableObjectNamespace<TenantGuard> },
  tenantId: string,
) {
  return env.TENANT_GUARD.get(env.TENANT_GUARD.idFromName(tenantId));
}

/** Usage history kept when no isolate has said otherwise (USAGE_RETENTION_DAYS). */
const DEFAULT_RETENTION_DAYS = 90;

/** How often rows that no longer count are swept away (docs/STORAGE.md). */
const SWEEP_EVERY_MS = 3_600_000;
const NO_OPTIONS: MeterOptions = { partitionShare: 1, largestCost: 1 };

export class TenantGuard extends DurableObject {
  private readonly sql: SqlStorage;
  private readonly store: GuardStore;
  private readonly ledger: Ledger;
  private alerts: AlertConfig | null | undefined;
  /** When the alarm is set for, as far as this object knows (undefined: not known). */
  private alarmAt: number | null | undefined;

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.store = new GuardStore(this.sql);
    this.ledger = new Ledger(sqlLedgerStorage(this.sql));
    migrateHistory(this.sql);
    migrateAlerts(this.sql);
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
    const limits = this.store.ownLimits() ?? req.defaults;
    const mode = limits.limiter ?? 'leased';
    this.store.countCall(mode === 'exact' ? 'exact_admits' : req.renewal ? 'renewals' : 'acquires');
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
    if (mode === 'leased' && !disabled) {
      const wants = new Map<string, number>();
      perScope.forEach(({ ask, meters: scopeMeters }, i) => {
        if (scopes[i]?.refusal) return;
        for (const m of scopeMeters) wants.set(m.key, (wants.get(m.key) ?? 0) + ask.want);
      });
      for (const [key, want] of wants) {
        const m = meters.get(key);
        if (!m || want <= 0) continue;
        const slot = slotAt(m, start);
        const left = m.limit - this.ledger.counted(m, slot, now);
        const units = Math.min(want, Math.floor(left * LEASE_SHARE));
        if (units <= 0) continue;
        this.ledger.charge(m, slot, units, now);
        leased.set(key, units);
      }
    }
    const grants = [...meters.values()].map((m) =>
      this.grant(m, start, now, leased.get(m.key) ?? 0),
    );
    this.noteQuotaAlerts([...meters.values()], now);
    this.ledger.flush();
    // Alarms run on the real clock, whatever time a caller passed in.
    this.scheduleAlarm(Date.now() + SWEEP_EVERY_MS);
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

  /** Usage an isolate gathered (guard/usage.ts): added to the hourly rollups. */
  record(batch: UsageBatch, retentionDays?: number): void {
    recordHistory(this.sql, batch);
    if (
      retentionDays !== undefined &&
      String(retentionDays) !== this.store.setting('retention_days')
    ) {
      this.store.putSetting('retention_days', String(retentionDays));
    }
    this.scheduleAlarm(Date.now() + SWEEP_EVERY_MS);
  }

  /** Usage history series for the operator API and the tenant's own view. */
  history(q: HistoryQuery): History {
    return queryHistory(this.sql, q);
  }

  /** Exact admission of one request: `acquire` with nothing leased, as a verdict. */
  admit(req: AdmitRequest): Verdict {
    const answer = this.acquire({
      now: req.now,
      start: req.now,
      leaseMaxMs: 0,
      defaults: req.defaults,
      meterOptions: { ...NO_OPTIONS, partitionShare: req.partitionShare ?? 1 },
      scopes: [
        {
          group: req.group,
          tokenId: req.tokenId,
          partition: req.partition,
          cost: req.cost,
          want: 0,
        },
      ],
      returns: [],
      renewal: false,
    });
    const refusal = answer.scopes[0]?.refusal ?? null;
    const meters = answer.meters.map((g) => meterState(g, req.now));
    return refusal
      ? {
          allowed: false,
          meters:
            refusal.reason === 'disabled' ||
            refusal.reason === 'revoked' ||
            refusal.reason === 'expired'
              ? []
              : meters,
          ...refusal,
        }
      : { allowed: true, meters, cacheVersion: answer.cacheVersion };
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

  private grant(m: Meter, start: number, now: number, leased: number): MeterGrant {
    const slot = slotAt(m, start);
    const remaining = Math.max(0, m.limit - this.ledger.counted(m, slot, now));
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

  /** Counters and what remains, without counting anything. */
  usage(
    now: number,
    defaults: Limits,
  ): { limits: Limits; custom: boolean; meters: MeterState[]; guard_calls: GuardCalls } {
    const own = this.store.ownLimits();
    const limits = own ?? defaults;
    const groups = ROUTE_GROUPS.filter((g) => limits.quota.groups?.[g]);
    const meters = new Map<string, Meter>();
    for (const group of ['teams' as const, ...groups]) {
      for (const m of metersFor(limits, null, { group, tokenId: '' }, NO_OPTIONS)) {
        meters.set(m.key, m);
      }
    }
    return {
      limits,
      custom: own !== null,
      meters: [...meters.values()].map((m) => meterState(this.grant(m, now, now, 0), now)),
      guard_calls: { ...this.store.guardCalls() },
    };
  }

  /** Replaces the tenant's limits; `null` returns it to the defaults. */
  setLimits(limits: Limits | null): void {
    this.store.putSetting('limits', limits && JSON.stringify(limitsSchema.parse(limits)));
  }

  /** A token's own limits, counted besides the tenant's; `null` removes them. */
  setTokenLimits(tokenId: string, limits: TokenLimits | null): void {
    this.store.putTokenLimits(tokenId, limits);
  }

  /**
   * Rotation, before the successor exists in KV: it gets the old token's own
   * limits and counts against the same meters, so the two together never
   * exceed them during the overlap, and rotating never resets a quota.
   */
  succeed(tokenId: string, successor: string): void {
    this.store.putTokenLimits(successor, this.store.tokenLimits(tokenId));
    this.store.shareMeters(successor, tokenId);
  }

  /** Every token's own limits, by token id. */
  allTokenLimits(): Record<string, TokenLimits> {
    return this.store.allTokenLimits();
  }

  /** A token's own limits, or null. */
  tokenLimits(tokenId: string): TokenLimits | null {
    return this.store.tokenLimits(tokenId);
  }

  /** Part of every cache key of this tenant; a new value orphans every old entry. */
  setCacheVersion(version: string): void {
    this.store.putSetting('cache_version', version);
  }

  cacheVersion(): string | null {
    return this.store.setting('cache_version');
  }

  /** From now on, every request with this token is refused, on every isolate. */
  revoke(tokenId: string, now: number): void {
    this.store.revoke(tokenId, now);
  }

  /** The token is refused from `at` on (rotation's overlap end); revocation wins. */
  expireAt(tokenId: string, at: number): void {
    this.store.expireAt(tokenId, at);
  }

  /** A disabled (or deleted) tenant is refused at once, whatever KV still says. */
  setDisabled(disabled: boolean): void {
    this.store.putSetting('disabled', String(disabled));
  }

  /**
   * The alarm: delivers quota alerts that are due, and sweeps rows that no longer
   * count (browser partitions and old slots pile up otherwise) and old history.
   */
  override async alarm(): Promise<void> {
    const now = Date.now();
    this.alarmAt = null;
    this.store.sweepSlots(now);
    this.ledger.sweep(now);
    const days = Number(this.store.setting('retention_days') ?? DEFAULT_RETENTION_DAYS);
    sweepHistory(this.sql, now - days * 86_400_000);
    sweepAlertsSent(this.sql, now);
    const { nextAt } = await this.deliverAlerts(now);
    this.scheduleAlarm(Math.min(nextAt ?? Number.POSITIVE_INFINITY, now + SWEEP_EVERY_MS));
  }

  /** Sets the quota alert webhook (thresholds in percent); null removes it. */
  setAlerts(config: AlertConfig | null): void {
    writeAlertConfig(this.sql, config);
    this.alerts = undefined;
  }

  /**
   * Re-seals the webhook's signing secret under the ring's current key (key
   * rotation, POST /admin/maintenance/reencrypt); true when it did.
   */
  async resealAlertSecret(): Promise<boolean> {
    const config = this.alertConfig();
    const ring = await keyRing(this.env.KEY_ENCRYPTION_KEY ?? '');
    if (!config || (isSealed(config.secret) && sealedKid(config.secret) === ring.currentKid)) {
      return false;
    }
    const secret = isSealed(config.secret)
      ? await open(ring, config.secret, config.tenantId)
      : config.secret;
    this.setAlerts({ ...config, secret: await seal(ring, secret, config.tenantId) });
    return true;
  }

  /** The webhook and thresholds, without the signing secret. */
  alertSettings(): { url: string; thresholds: number[] } | null {
    const config = this.alertConfig();
    return config && { url: config.url, thresholds: config.thresholds };
  }

  /** Sends the quota alerts due at `now` (the alarm calls this; tests pass their own time). */
  async deliverAlerts(now: number): Promise<{ results: DeliveryResult[]; nextAt: number | null }> {
    const ring = await keyRing(this.env.KEY_ENCRYPTION_KEY ?? '');
    const delivered = await deliverDue(this.sql, this.alertConfig(), ring, now);
    for (const r of delivered.results) {
      await auditLog(this.env).record({
        action: `alert.${r.outcome}`,
        tenant_id: r.payload.tenant_id,
        token_id: null,
        request_id: `alert-${r.id}`,
        detail: {
          policy: r.payload.policy,
          threshold: r.payload.threshold,
          attempts: r.attempts,
          status: r.status,
        },
      });
    }
    return delivered;
  }

  /** Queues alerts for the quotas whose use has crossed a threshold (alerts.ts). */
  private noteQuotaAlerts(meters: Meter[], now: number): void {
    const config = this.alertConfig();
    if (!config) return;
    for (const m of meters) {
      if (m.kind !== 'quota') continue;
      const slot = slotAt(m, now);
      const used = this.ledger.counted(m, slot, now);
      const quota = { meter: m.key, policy: m.name, used, limit: m.limit };
      const due = noteQuotaUse(
        this.sql,
        config,
        { ...quota, periodStart: slot.start, periodEnd: slot.end },
        now,
      );
      // Alarms run on the real clock, whatever time a caller passed in.
      if (due !== null) this.scheduleAlarm(Date.now());
    }
  }

  private alertConfig(): AlertConfig | null {
    if (this.alerts === undefined) this.alerts = readAlertConfig(this.sql);
    return this.alerts;
  }

  /** Makes sure the alarm fires by `at` (real clock). */
  private scheduleAlarm(at: number): void {
    const wanted = Math.max(at, Date.now());
    if (this.alarmAt !== undefined && this.alarmAt !== null && this.alarmAt <= wanted) return;
    this.alarmAt = wanted;
    void this.ctx.storage
      .getAlarm()
      .then((current) =>
        current === null || current > wanted ? this.ctx.storage.setAlarm(wanted) : undefined,
      )
      .catch(() => {
        this.alarmAt = undefined;
      });
  }
}
