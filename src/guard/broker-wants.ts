/**
 * How the root shares a meter among the regional brokers that lease from it
 * (docs/LIMITS.md, "Hierarchical leases"): Doorman's proportional share. Each
 * broker's latest want is remembered for a while; when what is left cannot meet
 * every broker's want, each gets left × its want / all wants, so a region
 * that asks first does not take units another region needs more. Without
 * contention a broker gets what it wants, within BROKER_SHARE of what is left.
 * In memory only: a restarted root relearns the wants within one broker lease.
 */

/** A broker's lease never takes more than this share of what is left of a meter… */
export const BROKER_SHARE = 1 / 2;
/** …unless this few units are left: then it may take them all. */
const BROKER_TAKES_ALL_BELOW = 2;
/** How long a broker's want counts (a few broker leases: it renews well within this). */
const WANT_MEMORY_MS = 10_000;

export class BrokerWants {
  /** Meter key → broker name → its latest want, and when. */
  private readonly wants = new Map<string, Map<string, { want: number; at: number }>>();

  /** Units to lease `holder` of a meter with `left` units left, given it wants `want`. */
  share(meterKey: string, holder: string, want: number, left: number, now: number): number {
    if (want <= 0 || left <= 0) return 0;
    if (left <= BROKER_TAKES_ALL_BELOW) return Math.min(want, left);
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
    const proportional = all > left ? Math.floor((left * want) / all) : want;
    return Math.max(1, Math.min(want, proportional, Math.floor(left * BROKER_SHARE)));
  }

  /** Drops wants no longer counted (the guard's sweep). */
  sweep(now: number): void {
    for (const [key, byHolder] of this.wants) {
      for (const [name, w] of byHolder) if (now - w.at > WANT_MEMORY_MS) byHolder.delete(name);
      if (byHolder.size === 0) this.wants.delete(key);
    }
  }
}
