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
