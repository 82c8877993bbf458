/**
 * The limits part's rows (docs/STORAGE.md) behind typed reads and writes, with
 * memory mirrors filled on first use: an object lives in one place and is the only
 * writer, so the mirrors cannot go stale, and SQLite survives eviction. The tenant's
 * own limits and its plan's (settings `limits`, `plan`), the calls answered (`stats`),
 * the brokers holding a lease (`lease_holders`), and the `slots` table the counts live
 * in (the ledger, ledger.ts).
 */
import { type Limits, limitsSchema } from '../../../metering/policy';
import type { GuardCalls } from '../../../types/wire';
import type { PlanPush } from '../plan-protocol';
import type { SettingsView } from '../settings';
import type { Sql } from '../sql';
import type { LedgerStorage, SlotRow } from './ledger';

export type { GuardCalls };

const CALL_KINDS = [
  'acquires',
  'renewals',
  'exact_admits',
  'broker_acquires',
  'broker_renewals',
] as const satisfies (keyof GuardCalls)[];

/** A broker that has not called for this long holds no lease any more and is not told of changes. */
export const HOLDER_KEPT_MS = 120_000;
/** A holder's last-seen time is written at most this often. */
const HOLDER_WRITE_EVERY_MS = 10_000;

export class LimitStore {
  private limits: Limits | null | undefined;
  private planState: PlanPush | null | undefined;
  private calls: GuardCalls | undefined;
  private holderSeen: Map<string, number> | undefined;

  constructor(
    private readonly sql: Sql,
    private readonly settings: SettingsView<'limits' | 'plan'>,
  ) {
    migrate(sql);
  }

  /** Replaces the tenant's own limits; null returns it to its plan's, or the defaults. */
  putOwnLimits(limits: Limits | null): void {
    this.settings.put('limits', limits && JSON.stringify(limitsSchema.parse(limits)));
    this.limits = undefined;
  }

  /** Keeps a plan push (plan-protocol.ts). */
  putPlan(push: PlanPush): void {
    const limits = push.limits && limitsSchema.parse(push.limits);
    this.settings.put('plan', JSON.stringify({ ...push, limits }));
    this.planState = undefined;
  }

  /** The last plan push this guard kept (plan-protocol.ts), or null: never on a plan. */
  plan(): PlanPush | null {
    if (this.planState === undefined) {
      const value = this.settings.get('plan');
      const kept = value ? (JSON.parse(value) as PlanPush) : null;
      this.planState = kept && {
        ...kept,
        limits: kept.limits && limitsSchema.parse(kept.limits),
      };
    }
    return this.planState;
  }

  /** The tenant's own limits, or null for the defaults. */
  ownLimits(): Limits | null {
    if (this.limits === undefined) {
      const value = this.settings.get('limits');
      this.limits = value ? limitsSchema.parse(JSON.parse(value)) : null;
    }
    return this.limits;
  }

  guardCalls(): GuardCalls {
    if (!this.calls) {
      const calls: GuardCalls = {
        acquires: 0,
        renewals: 0,
        exact_admits: 0,
        broker_acquires: 0,
        broker_renewals: 0,
      };
      for (const row of this.sql.exec<{ name: string; value: number }>('SELECT * FROM stats')) {
        const kind = CALL_KINDS.find((k) => k === row.name);
        if (kind) calls[kind] = row.value;
      }
      this.calls = calls;
    }
    return this.calls;
  }

  countCall(kind: keyof GuardCalls, by = 1): void {
    if (by <= 0) return;
    const calls = this.guardCalls();
    calls[kind] += by;
    this.sql.exec('INSERT OR REPLACE INTO stats (name, value) VALUES (?, ?)', kind, calls[kind]);
  }

  /** A broker holds a lease from this guard: it will be told of operator changes. */
  noteHolder(name: string, now: number): void {
    const seen = this.holders();
    const last = seen.get(name);
    seen.set(name, now);
    if (last !== undefined && now - last < HOLDER_WRITE_EVERY_MS) return;
    this.sql.exec('INSERT OR REPLACE INTO lease_holders (name, seen) VALUES (?, ?)', name, now);
  }

  /** Brokers that may still hold a lease at `now` (seen within HOLDER_KEPT_MS). */
  activeHolders(now: number): string[] {
    const out: string[] = [];
    for (const [name, seen] of this.holders()) {
      if (now - seen <= HOLDER_KEPT_MS + HOLDER_WRITE_EVERY_MS) out.push(name);
    }
    return out;
  }

  private holders(): Map<string, number> {
    if (!this.holderSeen) {
      const rows = this.sql.exec<{ name: string; seen: number }>('SELECT * FROM lease_holders');
      this.holderSeen = new Map([...rows].map((r) => [r.name, r.seen]));
    }
    return this.holderSeen;
  }

  /** Slot rows that no longer count (browser partitions and old slots pile up otherwise). */
  sweepSlots(now: number): void {
    this.sql.exec('DELETE FROM slots WHERE keep_until <= ?', now);
    const stale = now - HOLDER_KEPT_MS - HOLDER_WRITE_EVERY_MS;
    this.sql.exec('DELETE FROM lease_holders WHERE seen < ?', stale);
    for (const [name, seen] of this.holders()) if (seen < stale) this.holderSeen?.delete(name);
  }
}

/** Tables, created or brought up to date when the object starts. */
function migrate(sql: Sql): void {
  sql.exec(`
    CREATE TABLE IF NOT EXISTS slots (
      meter TEXT NOT NULL, slot_start INTEGER NOT NULL, used INTEGER NOT NULL,
      keep_until INTEGER NOT NULL, spent INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (meter, slot_start));
    CREATE TABLE IF NOT EXISTS stats (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS lease_holders (name TEXT PRIMARY KEY, seen INTEGER NOT NULL);
  `);
  // Objects from before slots kept one row per fixed window: each becomes one slot.
  const old = sql.exec<{ n: number }>(
    "SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'counters'",
  );
  if (old.one().n > 0) {
    sql.exec(`INSERT OR IGNORE INTO slots (meter, slot_start, used, keep_until)
              SELECT key, window_start, used, reset_at FROM counters`);
    sql.exec('DROP TABLE counters');
  }
  // Slots from before units spent were kept apart: what they counted is taken as spent,
  // as `used` said then (their leases end within seconds of the object starting).
  const columns = sql.exec<{ name: string }>('PRAGMA table_info(slots)').toArray();
  if (!columns.some((c) => c.name === 'spent')) {
    sql.exec('ALTER TABLE slots ADD COLUMN spent INTEGER NOT NULL DEFAULT 0');
    sql.exec('UPDATE slots SET spent = used');
  }
}

/** The ledger's slot rows in the `slots` table. */
export function sqlLedgerStorage(sql: Sql): LedgerStorage {
  return {
    load: (meter, now) =>
      sql
        .exec<{ slot_start: number; used: number; spent: number; keep_until: number }>(
          `SELECT slot_start, used, spent, keep_until FROM slots
           WHERE meter = ? AND keep_until > ?`,
          meter,
          now,
        )
        .toArray()
        .map((r) => ({
          slot: r.slot_start,
          used: r.used,
          spent: r.spent,
          keepUntil: r.keep_until,
        })),
    save: (rows: SlotRow[]) => {
      // SQLite in Durable Objects binds at most 100 values per statement.
      for (let i = 0; i < rows.length; i += 20) {
        const chunk = rows.slice(i, i + 20);
        sql.exec(
          `INSERT INTO slots (meter, slot_start, used, spent, keep_until)
           VALUES ${chunk.map(() => '(?, ?, ?, ?, ?)').join(', ')}
           ON CONFLICT(meter, slot_start) DO UPDATE SET used = excluded.used, spent = excluded.spent`,
          ...chunk.flatMap((r) => [r.meter, r.slot, r.used, r.spent, r.keepUntil]),
        );
      }
    },
  };
}
