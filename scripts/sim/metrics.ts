/** What a simulation run measured, and how each figure is computed from the raw events. */

/** The most units admitted inside any window of `windowMs` (a span shorter than the window). */
export function busiestWindow(admitted: { at: number; units: number }[], windowMs: number): number {
  let most = 0;
  let sum = 0;
  let from = 0;
  for (let to = 0; to < admitted.length; to++) {
    sum += admitted[to]!.units;
    while (admitted[to]!.at - admitted[from]!.at >= windowMs) sum -= admitted[from++]!.units;
    most = Math.max(most, sum);
  }
  return most;
}

/** The p-th percentile (0..100) of a list of numbers, nearest rank; 0 for none. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** Counts and waits of the requests of one run. */
export class Tally {
  requests = 0;
  admitted = 0;
  refused = 0;
  unavailable = 0;
  /** Requests whose answer waited for a call to the root guard, across the world. */
  waitedForRoot = 0;
  /** Requests whose answer waited for a call that stopped at a regional broker. */
  waitedForRegion = 0;
  /** Refusals answered in the isolate itself: no call to any Durable Object. */
  refusedInIsolate = 0;
  /** Refusals whose answer waited for no call to the root TenantGuard (isolate or broker). */
  refusedWithoutGuardCall = 0;
  /** Requests past the warm-up: the share of waits is of these. */
  measured = 0;
  /** Added wait of every request past the warm-up, ms (0: none). */
  readonly waits: number[] = [];
  /** The same, of admitted and of refused requests apart. */
  readonly admittedWaits: number[] = [];
  readonly refusedWaits: number[] = [];

  /** `warm`: past the scenario's warm-up, when every region has met the tenant's tokens once. */
  record(
    outcome: 'admitted' | 'refused' | 'unavailable',
    waitMs: number,
    waitedOn: WaitedOn,
    warm: boolean,
  ) {
    this.requests++;
    this[outcome]++;
    if (outcome === 'refused') {
      if (waitedOn === 'none') this.refusedInIsolate++;
      if (waitedOn !== 'root') this.refusedWithoutGuardCall++;
    }
    if (!warm) return;
    this.measured++;
    this.waits.push(waitMs);
    if (outcome === 'admitted') this.admittedWaits.push(waitMs);
    else if (outcome === 'refused') this.refusedWaits.push(waitMs);
    if (waitedOn === 'root') this.waitedForRoot++;
    else if (waitedOn === 'region') this.waitedForRegion++;
  }
}

/** What a request's answer waited for: nothing, a regional broker only, or the root guard. */
export type WaitedOn = 'none' | 'region' | 'root';
