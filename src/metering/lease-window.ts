/**
 * A lease as its holder keeps it: from when to when it holds, and the units
 * of each meter it has not used yet. An isolate's lease (limits/lease.ts) and
 * a regional broker's pool (objects/broker/broker.ts) each keep two windows: the one
 * in use and, once renewed ahead, the next, which takes over when the first
 * ends. Units a window held and never used go back to the grantor with the
 * holder's next call. No I/O and no clock of its own: time is passed in.
 */

import type {
  LeaseAnswer,
  LeaseRequest,
  MeterGrant,
  Refusal,
  Returned,
  ScopeAsk,
  ScopeGrant,
} from './lease-protocol';
import { scopeKey } from './lease-protocol';
import { secondsUntil } from './meter-state';
import type { Scope } from './policy';

/** One meter of a window: its grant, and the units of it not yet used. */
export interface Held {
  grant: MeterGrant;
  /** Units not yet admitted (an isolate) or leased on to an isolate (a broker). */
  left: number;
}

export interface LeaseWindow {
  start: number;
  expiresAt: number;
  meters: Map<string, Held>;
}

/**
 * An answer's lease as a window, every leased unit still held; `skew` moves it,
 * and the times its meters name, back by that much (a grantor's clock running
 * ahead, limits/lease.ts). A slot stays as named: returns name it.
 */
export function windowOf(answer: LeaseAnswer, skew = 0): LeaseWindow {
  return {
    start: answer.start - skew,
    expiresAt: answer.expiresAt - skew,
    meters: new Map(answer.meters.map((g) => [g.key, { grant: skewed(g, skew), left: g.leased }])),
  };
}

function skewed(g: MeterGrant, skew: number): MeterGrant {
  if (skew === 0) return g;
  const fitsAgainAt = g.fitsAgainAt === null ? null : g.fitsAgainAt - skew;
  return { ...g, resetAt: g.resetAt - skew, fitsAgainAt };
}

/** When a window is `share` of the way through: the time to renew it ahead. */
export const renewAheadAt = (w: LeaseWindow, share: number) =>
  w.start + share * (w.expiresAt - w.start);

/** Whether some meter is down to `share` of what was leased: the time to top it up. */
export function runsLow(w: LeaseWindow, share: number): boolean {
  for (const h of w.meters.values()) {
    if (h.grant.leased > 0 && h.left <= h.grant.leased * share) return true;
  }
  return false;
}

/** The window's holding of each of a scope's meters; null if it lacks one. */
export function heldOf(period: LeaseWindow, meters: string[]): Held[] | null {
  const held: Held[] = [];
  for (const key of meters) {
    const h = period.meters.get(key);
    if (!h) return null;
    held.push(h);
  }
  return held;
}

/** A meter as this holder sees it: what nobody holds, plus what it holds itself. */
export const remainingWith = (h: Held) => Math.min(h.grant.limit, h.grant.remaining + h.left);

/** What a holder knows of one scope from the grantor's last answer. */
export interface ScopeTerms {
  scope: Scope;
  /** Keys of the meters a request of this scope is counted against. */
  meters: string[];
  tokenEnd: ScopeGrant['tokenEnd'];
}

/** A scope asked for, its key, the answer's grant for it, and what the holder keeps of that. */
export interface AnsweredScope {
  key: string;
  ask: ScopeAsk;
  grant: ScopeGrant;
  terms: ScopeTerms;
}

/** Each scope a request asked for with the answer's grant (answers keep the order asked). */
export function answeredScopes(req: LeaseRequest, answer: LeaseAnswer): AnsweredScope[] {
  const out: AnsweredScope[] = [];
  req.scopes.forEach((ask, i) => {
    const grant = answer.scopes[i];
    if (!grant) return;
    const scope = { group: ask.group, tokenId: ask.tokenId, partition: ask.partition };
    out.push({
      key: scopeKey(ask),
      ask,
      grant,
      terms: { scope, meters: grant.meters, tokenEnd: grant.tokenEnd },
    });
  });
  return out;
}

/**
 * The windows one holder keeps, the one in use and the next, and the unused
 * units of those it retired, to give back with its next call.
 */
export class LeaseWindows {
  private currentWindow: LeaseWindow | null = null;
  private nextWindow: LeaseWindow | null = null;
  private returns: Returned[] = [];

  /** The window in use, as last moved on (it may have ended since). */
  get current(): LeaseWindow | null {
    return this.currentWindow;
  }

  /** The window renewed ahead, waiting for the current one to end. */
  get next(): LeaseWindow | null {
    return this.nextWindow;
  }

  /**
   * Moves on one step at `now`: an ended current window is retired, and the
   * next takes over once it has started (if it has ended too, the next step
   * retires it).
   */
  advance(now: number): void {
    if (this.currentWindow && now >= this.currentWindow.expiresAt) {
      this.retire(this.currentWindow);
      this.currentWindow = null;
    }
    if (!this.currentWindow && this.nextWindow && now >= this.nextWindow.start) {
      this.currentWindow = this.nextWindow;
      this.nextWindow = null;
    }
  }

  /** The current window if it holds `now`, after moving on. */
  inUse(now: number): LeaseWindow | null {
    this.advance(now);
    const w = this.currentWindow;
    return w && now >= w.start && now < w.expiresAt ? w : null;
  }

  /** The window, current or next, that holds `at`, after moving on at `now`. */
  holding(at: number, now: number): LeaseWindow | null {
    this.advance(now);
    for (const w of [this.currentWindow, this.nextWindow]) {
      if (w && at >= w.start && at < w.expiresAt) return w;
    }
    return null;
  }

  /** `w` becomes the next window; the next one it replaces is retired. */
  setNext(w: LeaseWindow): void {
    this.retire(this.nextWindow);
    this.nextWindow = w;
  }

  /**
   * `w` becomes the window in use; the one it replaces is retired. `carry`: that
   * one's unused units of a slot `w` counts in too move into `w` first (they are
   * counted for that slot already), the rest go back.
   */
  setCurrent(w: LeaseWindow, carry = false): void {
    const old = this.currentWindow;
    if (old && carry) {
      for (const [key, h] of old.meters) {
        const same = w.meters.get(key);
        if (same && same.grant.slot === h.grant.slot) {
          same.left += h.left;
          h.left = 0;
        }
      }
    }
    this.retire(old);
    this.currentWindow = w;
  }

  /** The window in use is retired, so its units go back (a next one stays). */
  dropCurrent(): void {
    this.retire(this.currentWindow);
    this.currentWindow = null;
  }

  /** Both windows are retired. */
  clear(): void {
    this.dropCurrent();
    this.retire(this.nextWindow);
    this.nextWindow = null;
  }

  /** A window that will not be used any more: its unused units go back with the next call. */
  retire(w: LeaseWindow | null): void {
    if (!w) return;
    for (const h of w.meters.values()) {
      if (h.left > 0) this.returns.push({ meter: h.grant.key, slot: h.grant.slot, units: h.left });
      h.left = 0;
    }
  }

  /** Whether unused units of one of these meters wait to go back (the grantor still counts them). */
  returning(meters: string[]): boolean {
    return this.returns.some((r) => r.units > 0 && meters.includes(r.meter));
  }

  /** Units given back to this holder: into the window they came from (same meter and slot), else on. */
  takeBack(returns: Returned[]): void {
    for (const r of returns) {
      const held = [this.currentWindow, this.nextWindow]
        .map((w) => w?.meters.get(r.meter))
        .find((h) => h && h.grant.slot === r.slot);
      if (held) held.left += r.units;
      else this.returns.push(r);
    }
  }

  /** Units to give back that a failed call did not deliver: with the next one. */
  giveBackLater(returns: Returned[]): void {
    this.returns.push(...returns);
  }

  /** The units to give back, taken out for a call. */
  takeReturns(): Returned[] {
    const returns = this.returns;
    this.returns = [];
    return returns;
  }
}

/**
 * Whether `cost` fits what a holder holds of every meter of a scope: null (it
 * does), 'ask' (the grantor may have more), or the refusal the root would give
 * (objects/tenant/limits/): a cost above a meter's whole window, or a meter known to be
 * full until a known time (one is enough: the root would refuse too), named by
 * the meter of the outranking kind (a quota over a rate) that fits again last,
 * with a Retry-After until every full meter fits.
 */
export function localVerdict(held: Held[], cost: number, now: number): Refusal | null | 'ask' {
  const never = held.find((h) => cost > h.grant.limit)?.grant;
  if (never) return { reason: 'too_costly', violated: never.name, limit: never.limit };
  const full: MeterGrant[] = [];
  let covered = true;
  for (const { grant, left } of held) {
    if (left >= cost) continue;
    const at = grant.fitsAgainAt;
    if (grant.remaining < cost && at !== null && now < at) full.push(grant);
    else covered = false;
  }
  if (full.length === 0) return covered ? null : 'ask';
  const kind = full.some((g) => g.kind === 'quota') ? 'quota' : 'rate';
  const at = (g: MeterGrant) => g.fitsAgainAt ?? now;
  const named = full.filter((g) => g.kind === kind).reduce((a, b) => (at(b) > at(a) ? b : a));
  return {
    reason: kind,
    violated: named.name,
    retryAfter: secondsUntil(Math.max(...full.map(at)), now),
  };
}

/**
 * A refusal lease (docs/LIMITS.md, "Refusal leases"): what the grantor's last
 * answers said of each scope and meter, kept after their lease has ended (or
 * in exact mode, where answers lease nothing), so a request of a scope whose
 * window is known to be full is refused here, with the refusal and RateLimit
 * fields the grantor would give, until the window frees (`fitsAgainAt`) and at
 * most until `until`: the bound within which a change that frees room early (a
 * raised limit, new limits, a reset) must be seen. Nothing is ever admitted
 * from it. No clock of its own.
 */
export class LastWord {
  private readonly scopes = new Map<string, { meters: string[]; until: number }>();
  private readonly meters = new Map<string, { grant: MeterGrant; until: number }>();

  /** Takes in an answer's scopes and meters, to be repeated until `until` at most. */
  hear(scopes: AnsweredScope[], grants: MeterGrant[], until: number, now: number): void {
    for (const [key, s] of this.scopes) if (s.until <= now) this.scopes.delete(key);
    for (const [key, m] of this.meters) if (m.until <= now) this.meters.delete(key);
    for (const s of scopes) {
      this.scopes.set(s.key, { meters: s.grant.meters, until });
    }
    for (const grant of grants) this.meters.set(grant.key, { grant, until });
  }

  /**
   * The refusal the grantor's last word makes certain for a request of `cost` in
   * the scope `key` now, with every meter of the scope as last heard (nothing
   * leased); null when it cannot say (a meter unheard, or not known to be full).
   * `early` may say a meter is full for longer than last heard (the holder is
   * asking the grantor about it just now, or has had its share): refusing early is
   * always safe.
   */
  refusal(
    key: string,
    cost: number,
    now: number,
    early?: (grant: MeterGrant) => MeterGrant,
  ): { refusal: Refusal; held: Held[] } | null {
    const scope = this.scopes.get(key);
    if (!scope || now >= scope.until) return null;
    const held: Held[] = [];
    for (const k of scope.meters) {
      const m = this.meters.get(k);
      if (!m || now >= m.until) return null;
      held.push({ grant: early ? early(m.grant) : m.grant, left: 0 });
    }
    const verdict = localVerdict(held, cost, now);
    return verdict && verdict !== 'ask' ? { refusal: verdict, held } : null;
  }

  /** Until when what was last heard of a meter may be repeated (0: nothing heard). */
  heardUntil(meterKey: string): number {
    return this.meters.get(meterKey)?.until ?? 0;
  }

  clear(): void {
    this.scopes.clear();
    this.meters.clear();
  }
}

/** Whether the tenant and a scope's token still stand, as of the grantor's last answer: null, or why not. */
export function standingOf(disabled: boolean, terms: ScopeTerms, now: number): Refusal | null {
  if (disabled) return { reason: 'disabled' };
  if (terms.tokenEnd && now >= terms.tokenEnd.at) return { reason: terms.tokenEnd.reason };
  return null;
}
