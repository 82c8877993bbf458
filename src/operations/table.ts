/** The operation table: every platform operation the gateway serves, in one list. */

import type { PlatformOperation } from '../types/operations';
import { agentOperations } from './agents';
import { apiKeyOperations } from './apikeys';
import { browserOperations } from './browsers';
import { callOperations } from './calls';
import { productOperations } from './products';
import { reportOperations } from './reports';
import { sessionOperations } from './sessions';
import { teamOperations } from './teams';

export const BUILT_IN_OPERATIONS: readonly PlatformOperation[] = [
  ...apiKeyOperations,
  ...callOperations,
  ...teamOperations,
  ...agentOperations,
  ...sessionOperations,
  ...browserOperations,
  ...productOperations,
  ...reportOperations,
];

/**
 * The operations that take an Idempotency-Key (docs/RESILIENCE.md): the platform's
 * writes, but an upload, whose body is streamed and never kept, so a repeat could not be
 * told from another request.
 */
export const takesIdempotencyKey = (op: Pick<PlatformOperation, 'method' | 'upload'>) =>
  op.method !== 'GET' && !op.upload;

/** The built-in operations that take an Idempotency-Key. */
export const WRITE_OPERATIONS: readonly string[] = BUILT_IN_OPERATIONS.filter(
  takesIdempotencyKey,
).map((s) => s.id);
