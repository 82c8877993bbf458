/**
 * How the root shares a meter among the regional brokers that lease from it
 * (docs/LIMITS.md, "Hierarchical leases"): Doorman's proportional share. Each
 * broker's latest want is remembered for a while. While what is left covers
 * every want, a broker gets what it wants. When it does not, the units of a
 * share period (what is left plus what brokers were granted in it) are split in
 * proportion to the wants, so a region that asks first does not take what
 * another region needs, and a broker that has had its share is told so (`spent`):
 * it refuses locally until the period ends instead of asking again.
 * In memory only: a restarted root relearns the wants within one broker lease.
 */

/** Units of a share period: its end, and what each broker was granted in it. */
interface Period {
  endsAt: number;
  granted: Map<string, number>;
}

/**
 * A slot shorter than this (a window of a few seconds) frees a few units at a time:
 * shares of it are rounded up, since rounding each down would leave most of them
 * idle for the slot (the simulation's flash crowd used 71 % of its limit, 83 % rounded
 * up). Over longer slots a share is rounded down, as the period's units last.
 */
const SHORT_SLOT_MS = 1000;
/** A share period lasts until the meter's slot ends, and at most this long. */
const PERIOD_MS = 5000;
/** How long a broker's want counts (it renews well within this while it is busy). */
const WANT_MEMORY_MS = 10_000;
/** A broker never takes more than this share of what is left of a meter… */
const BROKER_SHARE = 1 / 2;
/** …unless this few units are left: then it takes them all, and the meter runs dry at once. */
const TAKES_ALL_BELOW = 2;

export interface BrokerShare {
  units: number;
  /** Null, or when the broker's share period ends: it has had its share until then. */
  spentUntil: number | null;
}

export class BrokerWants {
  /** Meter key → broker name → its latest want, and when. */
  private readonly wants = new Map<string, Map<string, { want: number; at: number }>>();
  /** Meter key and slot → its current share period. */
  private readonly periods = new Map<string, Period>();

  /**
   * Units to lease `holder` of a meter with `left` units left in `slot` (the
   * slot the units are counted in), given it wants `want`.
   */
  share(
    meterKey: string,
    slot: { start: number; end: number },
    holder: string,
    want: number,
    left: number,
    now: number,
  ): BrokerShare {
    if (want <= 0 || left <= 0) return { units: 0, spentUntil: null };
    if (left <= TAKES_ALL_BELOW) return { units: Math.min(want, left), spentUntil: null };
    const all = this.noteWant(meterKey, holder, want, now);
    const period = this.periodOf(`${meterKey}@${slot.start}`, now, slot.end);
    let granted = 0;
    for (const units of period.granted.values()) granted += units;
    const total = left + granted;
    let units = Math.min(want, Math.max(1, Math.floor(left * BROKER_SHARE)));
    let spentUntil: number | null = null;
    if (all > total) {
      // What is still due to this broker of its fair share; once that, not half of
      // what is left, is what limits it, it has had its share for this period.
      const round = slot.end - slot.start < SHORT_SLOT_MS ? Math.ceil : Math.floor;
      const due = round((total * want) / all) - (period.granted.get(holder) ?? 0);
      if (due <= units) {
        units = Math.max(0, due);
        spentUntil = period.endsAt;
      }
    }
    period.granted.set(holder, (period.granted.get(holder) ?? 0) + units);
    return { units, spentUntil };
  }

  /** Drops wants and periods no longer counted (the guard's sweep). */
  sweep(now: number): void {
    for (const [key, byHolder] of this.wants) {
      for (const [name, w] of byHolder) if (now - w.at > WANT_MEMORY_MS) byHolder.delete(name);
      if (byHolder.size === 0) this.wants.delete(key);
    }
    for (const [key, period] of this.periods) if (period.endsAt <= now) this.periods.delete(key);
  }

  /** Records a broker's want; the sum of every broker's want still counted. */
  private noteWant(meterKey: string, holder: string, want: number, now: number): number {
    let byHolder = this.wants.get(meterKey);
    if (!byHolder) {
      byHolder = new Map();
      this.wants.set(meterKey, byHolder);
    }
    byHolder.set(holder, { want, at: now });
    let all = 0;
    for (const [name, w] of byHolder) {
      if (now - w.at > WANT_MEMORY_MS) byHolder.delete(name);
      else all += w.want;
    }
    return all;
  }

  private periodOf(key: string, now: number, slotEnd: number): Period {
    let period = this.periods.get(key);
    if (!period || now >= period.endsAt) {
      period = { endsAt: Math.min(slotEnd, now + PERIOD_MS), granted: new Map() };
      this.periods.set(key, period);
    }
    return period;
  }
}
