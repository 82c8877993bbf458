/**
 * A region's demand for one scope, as its broker sees it (broker.ts): units
 * its isolates took, less the units they gave back unused, decayed over
 * DEMAND_MEMORY_MS, so a few quiet seconds do not empty the next pool and a
 * region's want follows what it used, not what its isolates held.
 */

/** How long units weigh in the demand (exponential decay time). */
const DEMAND_MEMORY_MS = 10_000;
/** A rate is never taken over less than this: a first burst is not a rate. */
const MIN_AGE_MS = 1000;
/**
 * Units a scope seen lately asks for at least: a few spare, so a quiet region's
 * next requests find the pool stocked (unused ones go back within a lease).
 */
const MIN_WANT = 4;

export class Demand {
  private units = 0;
  private at: number;
  private readonly since: number;

  constructor(now: number) {
    this.at = now;
    this.since = now;
  }

  /** Units handed to isolates (leases and waiting costs). */
  add(units: number, now: number): void {
    this.units = this.value(now) + units;
    this.at = now;
  }

  /** Units given back unused. */
  remove(units: number, now: number): void {
    this.units = Math.max(0, this.value(now) - units);
    this.at = now;
  }

  /** The decayed sum now. */
  value(now: number): number {
    return this.units * Math.exp(-Math.max(0, now - this.at) / DEMAND_MEMORY_MS);
  }

  /** Units likely needed over a lease of `length` ms: twice the smoothed rate, at least MIN_WANT. */
  want(now: number, length: number): number {
    // The decayed sum covers DEMAND_MEMORY_MS only once the demand is that old: a
    // younger one's covers its age, or a cold start would ask for a tenth of its need.
    const age = Math.max(MIN_AGE_MS, now - this.since);
    const span = DEMAND_MEMORY_MS * (1 - Math.exp(-age / DEMAND_MEMORY_MS));
    return Math.max(MIN_WANT, Math.ceil((this.value(now) / span) * length * 2));
  }
}
