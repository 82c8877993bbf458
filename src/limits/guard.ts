/**
 * TenantGuard: one SQLite-backed Durable Object per tenant that answers, in a
 * single call per request, whether the token is still valid, whether the
 * request fits every rate policy and quota, and counts it.
 *
 * A Durable Object runs one call at a time and SQLite calls are synchronous,
 * so check-and-count is atomic: N concurrent requests against a limit L let
 * exactly L through. Counters are written to SQLite on every admitted request
 * and survive eviction; reads come from memory.
 */
import { DurableObject } from 'cloudflare:workers';
import { ROUTE_GROUPS } from '../routes/types';
import { type LimitGroup, type Limits, limitsSchema, type Meter, metersFor } from './policy';

export interface AdmitRequest {
  tokenId: string;
  /** Route group, for group quotas (`auth` for minting browser tokens). */
  group: LimitGroup;
  cost: number;
  /** Milliseconds since the epoch; passed in so tests can move time. */
  now: number;
  /** The settings' limits, used while the tenant has none of its own. */
  defaults: Limits;
  /** A sub-partition counted in addition to the tenant (browser tokens). */
  partition?: string;
  /** Fraction of each rate policy a partition may use (BROWSER_PARTITION_SHARE). */
  partitionShare?: number;
}

export interface MeterState {
  name: string;
  kind: 'rate' | 'quota';
  limit: number;
  window_s: number;
  used: number;
  remaining: number;
  /** Seconds until this window resets. */
  reset_s: number;
}

export type Verdict =
  | { allowed: true; meters: MeterState[]; cacheVersion: string }
  | { allowed: false; reason: 'revoked' | 'expired' | 'disabled'; meters: MeterState[] }
  | {
      allowed: false;
      reason: 'rate' | 'quota';
      violated: string;
      retryAfter: number;
      meters: MeterState[];
    }
  | { allowed: false; reason: 'too_costly'; violated: string; limit: number; meters: MeterState[] };

/** Rows of the `settings` table (docs/STORAGE.md). */
type SettingName = 'limits' | 'cache_version' | 'disabled';

/** The TenantGuard of one tenant. */
export function guardFor(
  env: { TENANT_GUARD: DurableObjectNamespace<TenantGuard> },
  tenantId: string,
) {
  return env.TENANT_GUARD.get(env.TENANT_GUARD.idFromName(tenantId));
}

/** How often ended counter windows are swept away (docs/STORAGE.md). */
const SWEEP_EVERY_MS = 3_600_000;

export class TenantGuard extends DurableObject {
  private readonly sql: SqlStorage;
  private limits: Limits | null | undefined;
  // Memory mirrors of SQLite rows, filled on first use: an object lives in one
  // place and is the only writer, so they cannot go stale; SQLite survives eviction.
  private readonly cachedSettings = new Map<SettingName, string | null>();
  private readonly counters = new Map<
    string,
    { windowStart: number; used: number; resetAt: number }
  >();
  private readonly tokenStates = new Map<
    string,
    { notAfter: number; reason: 'revoked' | 'expired' } | null
  >();
  private sweepScheduled = false;

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(`
      CREATE TABLE IF NOT EXISTS counters (key TEXT PRIMARY KEY, window_start INTEGER NOT NULL, used INTEGER NOT NULL, reset_at INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS token_states (token_id TEXT PRIMARY KEY, not_after INTEGER NOT NULL, reason TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
    `);
    // Objects created before counters had reset_at get the column.
    const columns = this.sql.exec<{ name: string }>('PRAGMA table_info(counters)').toArray();
    if (!columns.some((c) => c.name === 'reset_at')) {
      // Older rows: assume the longest window (31 days), so no live counter is swept early.
      this.sql.exec('ALTER TABLE counters ADD COLUMN reset_at INTEGER NOT NULL DEFAULT 0');
      this.sql.exec(
        'UPDATE counters SET reset_at = window_start + ? WHERE reset_at = 0',
        31 * 86_400_000,
      );
    }
  }

  /** The one call per request: tenant and token state, every meter, then count. */
  admit(req: AdmitRequest): Verdict {
    if (this.setting('disabled') === 'true')
      return { allowed: false, reason: 'disabled', meters: [] };
    const ended = this.tokenEnded(req.tokenId, req.now);
    if (ended) return { allowed: false, reason: ended, meters: [] };
    const partition = req.partition
      ? { id: req.partition, share: req.partitionShare ?? 1 }
      : undefined;
    const counted = metersFor(this.ownLimits() ?? req.defaults, req.group, req.now, partition).map(
      (meter) => ({ meter, used: this.used(meter) }),
    );
    const states = (extra: number) => counted.map((c) => state(c.meter, c.used + extra, req.now));

    // A request dearer than a whole window would wait forever: say so instead.
    const never = counted.find((c) => req.cost > c.meter.limit)?.meter;
    if (never) {
      return {
        allowed: false,
        reason: 'too_costly',
        violated: never.name,
        limit: never.limit,
        meters: states(0),
      };
    }
    const violated = counted.filter((c) => c.used + req.cost > c.meter.limit).map((c) => c.meter);
    if (violated.length > 0) {
      // An exhausted quota outranks a rate window: waiting for the window would not help.
      const kind = violated.some((m) => m.kind === 'quota') ? 'quota' : 'rate';
      const named = violated
        .filter((m) => m.kind === kind)
        .reduce((a, b) => (b.resetAt > a.resetAt ? b : a));
      // The request fits again only once every violated window has reset.
      const resetAt = Math.max(...violated.map((m) => m.resetAt));
      return {
        allowed: false,
        reason: kind,
        violated: named.name,
        retryAfter: secondsUntil(resetAt, req.now),
        meters: states(0),
      };
    }
    this.count(counted.map((c) => ({ meter: c.meter, used: c.used + req.cost })));
    if (req.partition && counted.length > 0) this.scheduleSweep();
    return {
      allowed: true,
      meters: states(req.cost),
      cacheVersion: this.setting('cache_version') ?? '0',
    };
  }

  /** One statement for every meter; memory mirrors what was written. */
  private count(rows: { meter: Meter; used: number }[]): void {
    if (rows.length === 0) return;
    this.sql.exec(
      `INSERT INTO counters (key, window_start, used, reset_at) VALUES ${rows.map(() => '(?, ?, ?, ?)').join(', ')}
       ON CONFLICT(key) DO UPDATE SET window_start = excluded.window_start, used = excluded.used, reset_at = excluded.reset_at`,
      ...rows.flatMap(({ meter, used }) => [meter.key, meter.windowStart, used, meter.resetAt]),
    );
    for (const { meter, used } of rows) {
      this.counters.set(meter.key, {
        windowStart: meter.windowStart,
        used,
        resetAt: meter.resetAt,
      });
    }
  }

  /**
   * Every browser token leaves counter rows behind; a row whose window has
   * ended counts as zero, so an hourly sweep deletes them and memory follows.
   */
  override async alarm(): Promise<void> {
    const now = Date.now();
    this.sql.exec('DELETE FROM counters WHERE reset_at <= ?', now);
    for (const [key, counter] of this.counters)
      if (counter.resetAt <= now) this.counters.delete(key);
    this.sweepScheduled = false;
  }

  private scheduleSweep(): void {
    if (this.sweepScheduled) return;
    this.sweepScheduled = true;
    // Alarms run on the real clock, whatever time a caller passed in.
    void this.ctx.storage
      .getAlarm()
      .then((at) =>
        at === null ? this.ctx.storage.setAlarm(Date.now() + SWEEP_EVERY_MS) : undefined,
      )
      .catch(() => {
        this.sweepScheduled = false;
      });
  }

  /** Part of every cache key of this tenant; a new value orphans every old entry. */
  setCacheVersion(version: string): void {
    this.sql.exec(
      "INSERT OR REPLACE INTO settings (name, value) VALUES ('cache_version', ?)",
      version,
    );
    this.cachedSettings.delete('cache_version');
  }

  /** Counters and what remains, without counting anything. */
  usage(now: number, defaults: Limits): { limits: Limits; custom: boolean; meters: MeterState[] } {
    const own = this.ownLimits();
    const limits = own ?? defaults;
    const groups = ROUTE_GROUPS.filter((g) => limits.quota.groups?.[g]);
    const meters = new Map<string, Meter>();
    for (const group of ['teams' as const, ...groups]) {
      for (const m of metersFor(limits, group, now)) meters.set(m.key, m);
    }
    return {
      limits,
      custom: own !== null,
      meters: [...meters.values()].map((m) => state(m, this.used(m), now)),
    };
  }

  /** Replaces the tenant's limits; `null` returns it to the defaults. */
  setLimits(limits: Limits | null): void {
    if (limits === null) {
      this.sql.exec("DELETE FROM settings WHERE name = 'limits'");
    } else {
      const valid = limitsSchema.parse(limits);
      this.sql.exec(
        "INSERT OR REPLACE INTO settings (name, value) VALUES ('limits', ?)",
        JSON.stringify(valid),
      );
    }
    this.limits = undefined;
    this.cachedSettings.delete('limits');
  }

  /** From now on, every request with this token is refused, on every isolate. */
  revoke(tokenId: string, now: number): void {
    this.sql.exec(
      "INSERT OR REPLACE INTO token_states (token_id, not_after, reason) VALUES (?, ?, 'revoked')",
      tokenId,
      now,
    );
    this.tokenStates.delete(tokenId);
  }

  /** The token is refused from `at` on (rotation's overlap end); revocation wins. */
  expireAt(tokenId: string, at: number): void {
    this.sql.exec(
      "INSERT INTO token_states (token_id, not_after, reason) VALUES (?, ?, 'expired') ON CONFLICT(token_id) DO UPDATE SET not_after = MIN(not_after, excluded.not_after)",
      tokenId,
      at,
    );
    this.tokenStates.delete(tokenId);
  }

  /** A disabled (or deleted) tenant is refused at once, whatever KV still says. */
  setDisabled(disabled: boolean): void {
    this.sql.exec(
      "INSERT OR REPLACE INTO settings (name, value) VALUES ('disabled', ?)",
      String(disabled),
    );
    this.cachedSettings.delete('disabled');
  }

  private tokenEnded(tokenId: string, now: number): 'revoked' | 'expired' | null {
    let state = this.tokenStates.get(tokenId);
    if (state === undefined) {
      const row = this.sql
        .exec<{ not_after: number; reason: string }>(
          'SELECT not_after, reason FROM token_states WHERE token_id = ?',
          tokenId,
        )
        .toArray()[0];
      state = row ? { notAfter: row.not_after, reason: row.reason as 'revoked' | 'expired' } : null;
      this.tokenStates.set(tokenId, state);
    }
    return state && now >= state.notAfter ? state.reason : null;
  }

  /** Small settings are read once per object life and then kept in memory. */
  private setting(name: SettingName): string | null {
    if (!this.cachedSettings.has(name)) {
      const row = this.sql
        .exec<{ value: string }>('SELECT value FROM settings WHERE name = ?', name)
        .toArray()[0];
      this.cachedSettings.set(name, row?.value ?? null);
    }
    return this.cachedSettings.get(name) ?? null;
  }

  private ownLimits(): Limits | null {
    if (this.limits === undefined) {
      const value = this.setting('limits');
      this.limits = value ? (JSON.parse(value) as Limits) : null;
    }
    return this.limits;
  }

  /** Units used in the meter's current window; an older window counts as empty. */
  private used(m: Meter): number {
    let counter = this.counters.get(m.key);
    if (!counter) {
      const row = this.sql
        .exec<{ window_start: number; used: number; reset_at: number }>(
          'SELECT window_start, used, reset_at FROM counters WHERE key = ?',
          m.key,
        )
        .toArray()[0];
      counter = row
        ? { windowStart: row.window_start, used: row.used, resetAt: row.reset_at }
        : { windowStart: -1, used: 0, resetAt: 0 };
      this.counters.set(m.key, counter);
    }
    return counter.windowStart === m.windowStart ? counter.used : 0;
  }
}

function state(m: Meter, used: number, now: number): MeterState {
  return {
    name: m.name,
    kind: m.kind,
    limit: m.limit,
    window_s: m.window_s,
    used,
    remaining: Math.max(0, m.limit - used),
    reset_s: secondsUntil(m.resetAt, now),
  };
}

function secondsUntil(at: number, now: number): number {
  return Math.max(1, Math.ceil((at - now) / 1000));
}
