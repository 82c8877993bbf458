/**
 * The TenantGuard's counts: units counted per meter per slot (slots.ts), which the
 * limits enforce (admitted and leased alike), and of them the units admitted requests
 * spent, which the views show as `used` (docs/LIMITS.md, "Counting"); kept in
 * memory and written through to storage. Pure apart from the storage it is given, so
 * the counting rules are tested on their own.
 */
import type { Meter } from '../../../metering/policy';
import { countedFrom, keptUntil, type Slot, slotAt } from './slots';

export interface SlotRow {
  meter: string;
  slot: number;
  /** Units counted: admitted, and leased out but not given back. */
  used: number;
  /** Units admitted requests spent, as their usage batches report them. */
  spent: number;
  /** When the row no longer counts anywhere and may be deleted. */
  keepUntil: number;
}

export interface LedgerStorage {
  /** A meter's rows that still count at `now`. */
  load(
    meterKey: string,
    now: number,
  ): { slot: number; used: number; spent: number; keepUntil: number }[];
  /** Writes (upserts) changed rows. */
  save(rows: SlotRow[]): void;
}

type MeterRef = Pick<Meter, 'key' | 'counting' | 'window_s'>;

export class Ledger {
  /** meter key → slot start → row. */
  private readonly rows = new Map<string, Map<number, SlotRow>>();
  private readonly dirty = new Map<string, SlotRow>();

  constructor(private readonly storage: LedgerStorage) {}

  /**
   * Units a check in `slot` counts: that slot, the ones before it it covers, and any charged ahead.
   */
  counted(meter: MeterRef, slot: Slot, now: number): number {
    return this.sum(meter, slot, now, 'used');
  }

  /** Of those, the units admitted requests spent (what the views call `used`). */
  spentIn(meter: MeterRef, slot: Slot, now: number): number {
    return this.sum(meter, slot, now, 'spent');
  }

  private sum(meter: MeterRef, slot: Slot, now: number, column: 'used' | 'spent'): number {
    const from = countedFrom(meter, slot.start);
    let sum = 0;
    for (const row of this.meterRows(meter.key, now).values()) {
      if (row.slot >= from) sum += row[column];
    }
    return sum;
  }

  /**
   * Adds units to a slot (admitted requests, or units leased out); `spent`: a request
   * admitted here, whose units are spent as they are counted.
   */
  charge(meter: MeterRef, slot: Slot, units: number, now: number, spent = false): void {
    if (units <= 0) return;
    const rows = this.meterRows(meter.key, now);
    const row = rows.get(slot.start) ?? {
      meter: meter.key,
      slot: slot.start,
      used: 0,
      spent: 0,
      keepUntil: keptUntil(meter, slot),
    };
    row.used += units;
    if (spent) row.spent += units;
    rows.set(slot.start, row);
    this.dirty.set(`${meter.key}@${slot.start}`, row);
  }

  /**
   * Units admitted requests spent in a slot whose units were counted before (leased, or
   * admitted here): the slot's row exists until it no longer counts anywhere, and a
   * report for a row gone (swept) counts nowhere either.
   */
  spend(meterKey: string, slotStart: number, units: number, now: number): void {
    const row = this.meterRows(meterKey, now).get(slotStart);
    if (!row || units <= 0) return;
    row.spent += units;
    this.dirty.set(`${meterKey}@${slotStart}`, row);
  }

  /** Takes back units leased out and never used; never below zero. */
  refund(meterKey: string, slotStart: number, units: number, now: number): void {
    const row = this.meterRows(meterKey, now).get(slotStart);
    if (!row || units <= 0) return;
    row.used = Math.max(0, row.used - units);
    this.dirty.set(`${meterKey}@${slotStart}`, row);
  }

  /**
   * The earliest time at or after `now` when `units` more fit under `limit`:
   * when enough of the counted slots have left the count. Infinity if never.
   */
  fitsAgainAt(meter: MeterRef, limit: number, units: number, now: number): number {
    if (units > limit) return Number.POSITIVE_INFINITY;
    let slot = slotAt(meter, now);
    // A sliding count loses one slot per slot; a fixed one empties at its end.
    for (let step = 0; step <= 64; step++) {
      if (this.counted(meter, slot, now) + units <= limit) return Math.max(now, slot.start);
      slot = slotAt(meter, slot.end);
    }
    return slot.start;
  }

  /**
   * When the count checked at `now` will have dropped to zero: the end of a
   * fixed slot, or, for a sliding window, when its last used slot leaves it.
   */
  drainsAt(meter: MeterRef, now: number): number {
    const slot = slotAt(meter, now);
    if (meter.counting !== 'sliding') return slot.end;
    const from = countedFrom(meter, slot.start);
    let last = Number.NEGATIVE_INFINITY;
    for (const row of this.meterRows(meter.key, now).values()) {
      if (row.slot >= from && row.used > 0) last = Math.max(last, row.keepUntil);
    }
    return Number.isFinite(last) ? last : now;
  }

  /** Rows changed since the last call, for the caller to write in one statement. */
  takeDirty(): SlotRow[] {
    const rows = [...this.dirty.values()];
    this.dirty.clear();
    return rows;
  }

  /** Writes every changed row to storage. */
  flush(): void {
    const rows = this.takeDirty();
    if (rows.length > 0) this.storage.save(rows);
  }

  /** Forgets rows that no longer count; storage deletes its own. */
  sweep(now: number): void {
    for (const [key, rows] of this.rows) {
      for (const [start, row] of rows) if (row.keepUntil <= now) rows.delete(start);
      if (rows.size === 0) this.rows.delete(key);
    }
  }

  private meterRows(key: string, now: number): Map<number, SlotRow> {
    let rows = this.rows.get(key);
    if (!rows) {
      rows = new Map();
      for (const r of this.storage.load(key, now)) {
        rows.set(r.slot, { meter: key, ...r });
      }
      this.rows.set(key, rows);
    }
    return rows;
  }
}
