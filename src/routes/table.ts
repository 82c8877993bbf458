/** The route table: every platform operation the gateway serves, in one list. */
import { agentRoutes } from './agents';
import { apiKeyRoutes } from './apikeys';
import { browserRoutes } from './browsers';
import { callRoutes } from './calls';
import { sessionRoutes } from './sessions';
import { teamRoutes } from './teams';
import type { RouteSpec } from './types';

export const ROUTE_SPECS: readonly RouteSpec[] = [
  ...apiKeyRoutes,
  ...callRoutes,
  ...teamRoutes,
  ...agentRoutes,
  ...sessionRoutes,
  ...browserRoutes,
];

/** The platform's writes: the operations that take an Idempotency-Key (docs/RESILIENCE.md). */
export const WRITE_OPERATIONS: readonly string[] = ROUTE_SPECS.filter(
  (s) => s.method !== 'GET',
).map((s) => s.id);
