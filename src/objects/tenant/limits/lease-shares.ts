/**
 * How a lease's units are shared out among the scopes of one lease call (the limits
 * part, limits-part.ts): an isolate can use a meter's units only as far as every other
 * meter of a scope allows, and a broker gets nothing of a meter too small to pool.
 */
import { MIN_POOLED_LIMIT, type ScopeGrant } from '../../../metering/lease-protocol';
import type { Meter } from '../../../metering/policy';

/**
 * Lowers each meter's lease to what the scopes that count against it can use: a
 * scope can use as many units as the least leased of its meters.
 */
export function alignToScopes(
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
export function unpoolable(perScope: { meters: Meter[] }[], scopes: ScopeGrant[]): Set<string> {
  const pooled = new Set<string>();
  const all = new Set<string>();
  perScope.forEach(({ meters }, i) => {
    for (const m of meters) all.add(m.key);
    if (scopes[i]?.refusal || meters.some((m) => m.limit < MIN_POOLED_LIMIT)) return;
    for (const m of meters) pooled.add(m.key);
  });
  return new Set([...all].filter((key) => !pooled.has(key)));
}
