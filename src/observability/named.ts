/**
 * Names what answers a request in its log line and usage history (observability/request-log.ts).
 */
import { createMiddleware } from 'hono/factory';
import type { HonoEnv } from '../types/context';

export function named(route: string) {
  return createMiddleware<HonoEnv>(async function named(c, next) {
    c.get('obs').route = route;
    await next();
  });
}
