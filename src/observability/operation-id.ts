/**
 * Sets the operation id (`team.list`, …) or the name of what else answers a
 * request (`admin`, `healthz`): its log line and usage history say it
 * (observability/request-log.ts).
 *
 * @example app.get('/healthz', operationId('healthz'), handler)
 */
import { createMiddleware } from 'hono/factory';
import type { HonoEnv } from '../types/context';

export function operationId(id: string) {
  return createMiddleware<HonoEnv>(async function operationId(c, next) {
    c.set('operationId', id);
    await next();
  });
}
