/** The route table: every platform operation the gateway serves, in one list. */

import type { RouteSpec } from '../types/operations';
import { agentRoutes } from './agents';
import { apiKeyRoutes } from './apikeys';
import { browserRoutes } from './browsers';
import { callRoutes } from './calls';
import { productRoutes } from './products';
import { reportRoutes } from './reports';
import { sessionRoutes } from './sessions';
import { teamRoutes } from './teams';

export const ROUTE_SPECS: readonly RouteSpec[] = [
  ...apiKeyRoutes,
  ...callRoutes,
  ...teamRoutes,
  ...agentRoutes,
  ...sessionRoutes,
  ...browserRoutes,
  ...productRoutes,
  ...reportRoutes,
];

/**
 * The operations that take an Idempotency-Key (docs/RESILIENCE.md): the platform's
 * writes, but an upload, whose body is streamed and never kept, so a repeat could not be
 * told from another request.
 */
export const takesIdempotencyKey = (spec: Pick<RouteSpec, 'method' | 'upload'>) =>
  spec.method !== 'GET' && !spec.upload;

/** The built-in operations that take an Idempotency-Key. */
export const WRITE_OPERATIONS: readonly string[] = ROUTE_SPECS.filter(takesIdempotencyKey).map(
  (s) => s.id,
);
