/**
 * Rate policies and quotas: their shape (shared by settings and the operator
 * API) and the windows they count in.
 *
 * - A rate policy counts in fixed windows of `window_s` seconds aligned to the
 *   Unix epoch (so every isolate agrees where a window starts).
 * - Quotas count per calendar day and calendar month in UTC.
 */
import { z } from 'zod';
import { ROUTE_GROUPS, type RouteGroup } from '../routes/types';

const policyName = z
  .string()
  .regex(
    /^[a-z][a-z0-9_-]{0,31}$/,
    'must be 1 to 32 lower-case letters, digits, _ or -, starting with a letter',
  )
  .refine(
    (n) => !/^(daily|monthly)$|-(daily|monthly|browser)$/.test(n),
    'daily, monthly, *-daily, *-monthly and *-browser are reserved',
  );

const ratePolicySchema = z.strictObject({
  name: policyName,
  limit: z.number().int().min(1).max(1_000_000_000),
  window_s: z
    .number()
    .int()
    .min(1)
    .max(31 * 86_400),
});

const quotaAmounts = z.strictObject({
  daily: z.number().int().min(1).max(1_000_000_000).optional(),
  monthly: z.number().int().min(1).max(1_000_000_000).optional(),
});

export const limitsSchema = z.strictObject({
  policies: z
    .array(ratePolicySchema)
    .max(8)
    .refine(
      (ps) => new Set(ps.map((p) => p.name)).size === ps.length,
      'policy names must be unique',
    ),
  quota: quotaAmounts
    .extend({ groups: z.partialRecord(z.enum(ROUTE_GROUPS), quotaAmounts).optional() })
    .default({}),
});

export type RatePolicy = z.infer<typeof ratePolicySchema>;
export type Limits = z.infer<typeof limitsSchema>;

/** For tenants without limits of their own (README, "Rate limits and quotas"). */
export const DEFAULT_LIMITS: Limits = {
  policies: [
    { name: 'burst', limit: 20, window_s: 10 },
    { name: 'sustained', limit: 600, window_s: 60 },
  ],
  quota: { daily: 10_000, monthly: 200_000 },
};

/** One counter the guard keeps: a rate policy window or a quota period. */
export interface Meter {
  /** Counter key in storage; also distinguishes partitions. */
  key: string;
  /** Policy name on the wire (RateLimit headers, error messages). */
  name: string;
  kind: 'rate' | 'quota';
  limit: number;
  /** Nominal window length in seconds, for RateLimit-Policy `w`. */
  window_s: number;
  windowStart: number;
  resetAt: number;
}

/** What a request is counted as, for group quotas: a route group, or `auth` (minting). */
export type LimitGroup = RouteGroup | 'auth';

/** A browser token's own share of each rate policy, counted besides the tenant's. */
export interface Partition {
  id: string;
  share: number;
}

/** The meters a request of `group` is counted against at time `now` (ms). */
export function metersFor(
  limits: Limits,
  group: LimitGroup,
  now: number,
  partition?: Partition,
): Meter[] {
  const meters: Meter[] = [];
  for (const p of limits.policies) {
    const w = p.window_s * 1000;
    const windowStart = Math.floor(now / w) * w;
    const base = {
      name: p.name,
      kind: 'rate' as const,
      limit: p.limit,
      window_s: p.window_s,
      windowStart,
      resetAt: windowStart + w,
    };
    meters.push({ ...base, key: `rate:${p.name}` });
    if (partition) {
      // The wire name says "this browser token's share"; each token has its own counter.
      const limit = Math.max(1, Math.floor(p.limit * partition.share));
      meters.push({
        ...base,
        key: `rate:${p.name}:${partition.id}`,
        name: `${p.name}-browser`,
        limit,
      });
    }
  }
  const { groups, ...tenantWide } = limits.quota;
  meters.push(...quotaMeters(tenantWide, '', now));
  const forGroup = group === 'auth' ? undefined : groups?.[group];
  if (forGroup) meters.push(...quotaMeters(forGroup, `${group}-`, now));
  return meters;
}

function quotaMeters(
  q: { daily?: number; monthly?: number },
  prefix: string,
  now: number,
): Meter[] {
  const out: Meter[] = [];
  const d = new Date(now);
  if (q.daily) {
    const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
    out.push({
      key: `quota:${prefix}daily`,
      name: `${prefix}daily`,
      kind: 'quota',
      limit: q.daily,
      window_s: 86_400,
      windowStart: start,
      resetAt: start + 86_400_000,
    });
  }
  if (q.monthly) {
    const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
    const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    out.push({
      key: `quota:${prefix}monthly`,
      name: `${prefix}monthly`,
      kind: 'quota',
      limit: q.monthly,
      window_s: (end - start) / 1000,
      windowStart: start,
      resetAt: end,
    });
  }
  return out;
}
