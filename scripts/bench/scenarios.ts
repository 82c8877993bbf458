/**
 * What `npm run bench` measures. Each group runs on its own stack (started
 * with the group's Worker vars, so settings such as rate limits can differ
 * between groups); the scenarios of a group run interleaved, round by round,
 * so they can be compared with each other. To add a measurement, add a
 * scenario to a group, or a group when it needs different stack settings.
 */
import { DEMO_PLATFORM_KEY } from '../../emulator/seed';
import type { Stack } from '../stack';

/** What a scenario can build its request from once its group's stack is up. */
export interface BenchContext {
  stack: Stack;
  /** Gateway token of a tenant created for this run with DEMO_PLATFORM_KEY. */
  token: string;
}

export interface Scenario {
  name: string;
  request(ctx: BenchContext): { url: string; headers: Record<string, string> };
  /** Name of a scenario in the same group to report this one relative to. */
  compareWith?: string;
}

export interface ScenarioGroup {
  name: string;
  /** Worker vars for this group's stack. */
  vars?: Record<string, string>;
  scenarios: Scenario[];
}

const HUGE = 1_000_000_000;
const unrefusedLimits = {
  policies: [
    { name: 'burst', limit: HUGE, window_s: 10 },
    { name: 'sustained', limit: HUGE, window_s: 60 },
  ],
  quota: { daily: HUGE, monthly: HUGE },
};

export const groups: ScenarioGroup[] = [
  {
    name: 'read route GET /team/lists',
    // The default limiter code path (same policies and quotas as DEFAULT_LIMITS, one
    // TenantGuard call per request), with limits so high that the bench is never refused.
    vars: { DEFAULT_LIMITS: JSON.stringify(unrefusedLimits) },
    scenarios: [
      {
        name: 'direct',
        request: ({ stack }) => ({
          url: `${stack.emulatorUrl}/team/lists`,
          headers: { authorization: DEMO_PLATFORM_KEY },
        }),
      },
      {
        // Every request forwarded to the platform: the read cache is bypassed (X-Cache: BYPASS).
        name: 'gateway',
        request: ({ stack, token }) => ({
          url: `${stack.gatewayUrl}/team/lists`,
          headers: { authorization: `Bearer ${token}`, 'cache-control': 'no-store' },
        }),
        compareWith: 'direct',
      },
      {
        // The route is cacheable (60 s TTL), so after the warm-up every request is a hit (X-Cache: HIT).
        name: 'gateway-hit',
        request: ({ stack, token }) => ({
          url: `${stack.gatewayUrl}/team/lists`,
          headers: { authorization: `Bearer ${token}` },
        }),
        compareWith: 'direct',
      },
    ],
  },
];
