/**
 * Rate policies and quotas: their shape (shared by settings, the operator API
 * and per-token limits) and the meters a request is counted against.
 *
 * - A rate policy counts in a sliding window of `window_s` seconds by default
 *   (docs/STORAGE.md, "Counting"), or in fixed windows aligned to the Unix
 *   epoch with `"algorithm": "fixed"`.
 * - Quotas count per calendar day and calendar month in UTC.
 * - `limiter` picks how isolates admit: `leased` (default) or `exact`
 *   (docs/LIMITS.md, "Leased and exact admission").
 */
import * as z from 'zod';
import { OPERATION_GROUPS } from '../operations/groups';
import type { Limits, OperationGroup, RatePolicy, TokenLimits } from '../types/settings';

export type { Limits, RatePolicy, TokenLimits };

const policyName = z
  .string()
  .regex(
    /^[a-z][a-z0-9_-]{0,31}$/,
    'must be 1 to 32 lower-case letters, digits, _ or -, starting with a letter',
  )
  .refine(
    (n) => !/^(daily|monthly|self-service)$|-(daily|monthly|browser|token)$/.test(n),
    'daily, monthly, self-service, *-daily, *-monthly, *-browser and *-token are reserved',
  );

const ratePolicySchema = z.strictObject({
  name: policyName,
  limit: z.number().int().min(1).max(1_000_000_000),
  window_s: z
    .number()
    .int()
    .min(1)
    .max(31 * 86_400),
  algorithm: z.enum(['sliding', 'fixed']).optional(),
}) satisfies z.ZodType<RatePolicy>;

const quotaAmounts = z.strictObject({
  daily: z.number().int().min(1).max(1_000_000_000).optional(),
  monthly: z.number().int().min(1).max(1_000_000_000).optional(),
});

const policiesSchema = z
  .array(ratePolicySchema)
  .max(8)
  .refine((ps) => new Set(ps.map((p) => p.name)).size === ps.length, 'policy names must be unique');

export const limitsSchema = z.strictObject({
  policies: policiesSchema,
  quota: quotaAmounts
    .extend({ groups: z.partialRecord(z.enum(OPERATION_GROUPS), quotaAmounts).optional() })
    .default({}),
  limiter: z.enum(['leased', 'exact']).optional(),
}) satisfies z.ZodType<Limits>;

/** A gateway token's own limits, counted in addition to its tenant's. */
export const tokenLimitsSchema = z.strictObject({
  policies: policiesSchema.default([]),
  quota: quotaAmounts.default({}),
}) satisfies z.ZodType<TokenLimits>;
export type LimiterMode = NonNullable<Limits['limiter']>;

/** For tenants without limits of their own (docs/LIMITS.md, "Policies, quotas and costs"). */
export const DEFAULT_LIMITS: Limits = {
  policies: [
    { name: 'burst', limit: 20, window_s: 10 },
    { name: 'sustained', limit: 600, window_s: 60 },
  ],
  quota: { daily: 10_000, monthly: 200_000 },
};

/** How a meter counts: sliding or fixed rate windows, or a UTC calendar day or month. */
export type Counting = 'sliding' | 'fixed' | 'day' | 'month';

/**
 * One thing the guard counts: a rate policy, or a quota, of a tenant, a browser token or a token.
 */
export interface Meter {
  /** Counter key in storage; also tells partitions and tokens apart. */
  key: string;
  /** Policy name on the wire (RateLimit headers, error messages). */
  name: string;
  kind: 'rate' | 'quota';
  limit: number;
  /** Nominal window length in seconds, for RateLimit-Policy `w`. */
  window_s: number;
  counting: Counting;
}

/**
 * What a request is counted as, for group quotas: an operation group (built-in, or one a
 * declared operation names, which has no group quota), or `auth` (minting browser
 * tokens, rotating) or `usage` (a token's own API document). `self` is a token
 * reading itself (GET /token, GET /usage): counted against that token's own small
 * self-service meter only, never the tenant's policies or quotas, so it answers
 * while they are spent.
 */
export type LimitGroup = string;

/** Self-service reads a token may make a minute when SELF_SERVICE_PER_MINUTE is not sent. */
export const SELF_SERVICE_PER_MINUTE = 60;
/** The self-service meter's name on the wire (RateLimit fields, refusals). */
export const SELF_SERVICE_POLICY = 'self-service';

const isOperationGroup = (g: LimitGroup): g is OperationGroup =>
  OPERATION_GROUPS.some((r) => r === g);

/** Who a request is counted for, besides its tenant. */
export interface Scope {
  group: LimitGroup;
  tokenId: string;
  /** A browser token's own partition (BROWSER_PARTITION_SHARE of each rate policy). */
  partition?: string;
}

export interface MeterOptions {
  /** Fraction of each rate policy a browser partition may use. */
  partitionShare: number;
  /**
   * The dearest single request (configured operation costs): a partition's share is
   * never below it, so a browser token with small limits can still make any call.
   */
  largestCost: number;
  /** A token's self-service reads a minute (SELF_SERVICE_PER_MINUTE; docs/LIMITS.md). */
  selfServicePerMinute?: number;
}

/** The meters a request of this scope is counted against, tenant's first. */
export function metersFor(
  limits: Limits,
  tokenLimits: TokenLimits | null,
  scope: Scope,
  options: MeterOptions,
): Meter[] {
  if (scope.group === 'self') {
    const who = scope.partition ? `${scope.tokenId}:${scope.partition}` : scope.tokenId;
    const limit = options.selfServicePerMinute ?? SELF_SERVICE_PER_MINUTE;
    const policy = { name: SELF_SERVICE_POLICY, limit, window_s: 60 };
    return [rateMeter(policy, `self:${who}`, SELF_SERVICE_POLICY)];
  }
  const meters: Meter[] = [];
  for (const p of limits.policies) {
    const base = rateMeter(p, `rate:${p.name}`, p.name);
    meters.push(base);
    if (scope.partition) {
      const share = Math.floor(p.limit * options.partitionShare);
      meters.push({
        ...base,
        // The wire name says "this browser token's share"; each token has its own counter.
        key: `rate:${p.name}:${scope.partition}`,
        name: `${p.name}-browser`,
        limit: Math.min(p.limit, Math.max(1, share, options.largestCost)),
      });
    }
  }
  const { groups, ...tenantWide } = limits.quota;
  meters.push(...quotaMeters(tenantWide, 'quota:', ''));
  const forGroup = isOperationGroup(scope.group) ? groups?.[scope.group] : undefined;
  if (forGroup) meters.push(...quotaMeters(forGroup, `quota:${scope.group}-`, `${scope.group}-`));
  if (tokenLimits) {
    const prefix = `token:${scope.tokenId}:`;
    for (const p of tokenLimits.policies) {
      meters.push(rateMeter(p, `${prefix}rate:${p.name}`, `${p.name}-token`));
    }
    meters.push(...quotaMeters(tokenLimits.quota, `${prefix}quota:`, 'token-'));
  }
  return meters;
}

function rateMeter(p: RatePolicy, key: string, name: string): Meter {
  const counting = p.algorithm ?? 'sliding';
  return { key, name, kind: 'rate', limit: p.limit, window_s: p.window_s, counting };
}

/**
 * The quota periods, in order. `window_s` is what RateLimit-Policy's `w` says: a month is
 * nominally 30 days; the window itself is the calendar month.
 */
const QUOTA_PERIODS = [
  { period: 'daily', window_s: 86_400, counting: 'day' },
  { period: 'monthly', window_s: 30 * 86_400, counting: 'month' },
] as const;

function quotaMeters(
  q: { daily?: number; monthly?: number },
  keyPrefix: string,
  namePrefix: string,
): Meter[] {
  return QUOTA_PERIODS.flatMap(({ period, window_s, counting }): Meter[] => {
    const limit = q[period];
    if (!limit) return [];
    const meter: Meter = {
      key: `${keyPrefix}${period}`,
      name: `${namePrefix}${period}`,
      kind: 'quota',
      limit,
      window_s,
      counting,
    };
    return [meter];
  });
}
