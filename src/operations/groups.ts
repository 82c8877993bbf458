/** The built-in resource groups: scopes, group quotas and OpenAPI tags are derived from them. */
import type { RouteGroup } from '../types/settings';

/** Each built-in resource group once, in this order. */
const GROUPS: Record<RouteGroup, true> = {
  apikeys: true,
  calls: true,
  teams: true,
  agents: true,
  sessions: true,
  browsers: true,
  products: true,
  reports: true,
};
export const ROUTE_GROUPS: readonly RouteGroup[] = Object.keys(GROUPS) as RouteGroup[];
