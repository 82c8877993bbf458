/**
 * What `npm run bench -- --wrangler-dev` measures. Every distinct set of Worker `vars` gets its
 * own stack (so settings such as `LIMITS_ENABLED` can differ between
 * scenarios); all stacks run at once and ALL scenarios are interleaved round
 * by round, so any two can be compared. To add a measurement, add a scenario.
 */
import { DEMO_PLATFORM_KEY } from '../../emulator/seed';
import type { Stack } from '../stack';

/** What a scenario can build its request from once its stack is up. */
export interface BenchContext {
  stack: Stack;
  /** Gateway token of a tenant created on this stack with DEMO_PLATFORM_KEY. */
  token: string;
}

export interface Scenario {
  name: string;
  /** Worker vars of the stack this scenario runs on. */
  vars: Record<string, string>;
  request(ctx: BenchContext): { url: string; headers: Record<string, string> };
  /** What counts as success: this HTTP status and envelope code (default 200 and 0). */
  expect?: { status: number; code: number };
  /** Name of another scenario to report this one relative to. */
  compareWith?: string;
}

const HUGE = 1_000_000_000;
// The default limiter code path (same policies and quotas as DEFAULT_LIMITS, one
// TenantGuard call per request), with limits so high that the bench is never refused.
const LIMITS_ON = {
  LIMITS_ENABLED: 'true',
  DEFAULT_LIMITS: JSON.stringify({
    policies: [
      { name: 'burst', limit: HUGE, window_s: 10 },
      { name: 'sustained', limit: HUGE, window_s: 60 },
    ],
    quota: { daily: HUGE, monthly: HUGE },
  }),
};
// No TenantGuard call at all. Without its cache version the read cache is bypassed too.
const LIMITS_OFF = { LIMITS_ENABLED: 'false' };

const teamLists =
  (cacheControl?: string) =>
  ({ stack, token }: BenchContext) => ({
    url: `${stack.gatewayUrl}/team/lists`,
    headers: {
      authorization: `Bearer ${token}`,
      ...(cacheControl ? { 'cache-control': cacheControl } : {}),
    },
  });

export const scenarios: Scenario[] = [
  {
    name: 'direct',
    vars: LIMITS_ON,
    request: ({ stack }) => ({
      url: `${stack.emulatorUrl}/team/lists`,
      headers: { authorization: DEMO_PLATFORM_KEY },
    }),
  },
  {
    // Every request forwarded to the platform: the read cache is bypassed (X-Cache: BYPASS).
    name: 'gateway',
    vars: LIMITS_ON,
    request: teamLists('no-store'),
    compareWith: 'direct',
  },
  {
    // Same request as `gateway`, without the TenantGuard call; also forwarded every time.
    name: 'gateway-limits-off',
    vars: LIMITS_OFF,
    request: teamLists('no-store'),
    compareWith: 'gateway',
  },
  {
    // The route is cacheable (60 s TTL), so after the warm-up every request is a hit (X-Cache: HIT).
    name: 'gateway-hit',
    vars: LIMITS_ON,
    request: teamLists(),
    compareWith: 'gateway',
  },
  {
    // No route, no auth, no upstream: the floor of the local runtime (wrangler dev + Hono).
    name: 'gateway-404',
    vars: LIMITS_ON,
    request: ({ stack }) => ({ url: `${stack.gatewayUrl}/nowhere`, headers: {} }),
    expect: { status: 404, code: 40400 },
  },
];
