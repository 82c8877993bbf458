/**
 * Registers an operation's handler from its definition (admin/operation.ts): the role
 * check, then the path, query and body validated with the definition's schemas
 * (middleware/validate.ts `validated`: the gateway's envelope on a failure, bodies read
 * once within MAX_BODY_BYTES), then the handler, whose answer is wrapped in the success
 * envelope with the definition's status.
 *
 * @example handle(app, contract.getTenant, async (c) => publicTenant(...))
 */
import type { Context, Hono, MiddlewareHandler } from 'hono';
import { createMiddleware } from 'hono/factory';
import type * as z from 'zod';
import { GatewayError, ok } from '../errors';
import { validated } from '../middleware/validate';
import type { HonoEnv } from '../types/context';
import type { OperatorRole } from '../types/settings';
import { ADMIN_BASE, type AdminOperation, type AnswerOf, type ValidatedOf } from './operation';

/** The operator API's app: routes from the root of ADMIN_BASE. */
export type AdminApp = Hono<HonoEnv>;

export type AdminContext<O> = Context<HonoEnv, string, ValidatedOf<O>>;

/**
 * Gives back the answer's data (typed by the definition's answer schema); a Response
 * only for an answer that is not JSON (a CSV export).
 */
export type AdminHandler<O> = (c: AdminContext<O>, operation: O) => Promise<AnswerOf<O> | Response>;

export function handle<const O extends AdminOperation>(
  app: AdminApp,
  operation: O,
  handler: AdminHandler<O>,
): void {
  const steps: MiddlewareHandler<HonoEnv>[] = [requireRole(operation.role)];
  const object = (schema: z.ZodType) => schema as z.ZodType<object>;
  if (operation.params) steps.push(validated('param', object(operation.params)));
  if (operation.query) steps.push(validated('query', object(operation.query)));
  if (operation.body) {
    steps.push(validated('json', object(operation.body), operation.bodyLimit));
  }
  const answer = async (c: Context<HonoEnv>) => {
    const data = await handler(c as AdminContext<O>, operation);
    if (data instanceof Response) return data;
    const body = operation.envelope === false ? data : ok(data);
    return c.json(body as object, operation.status ?? 200);
  };
  const path = operation.path.slice(ADMIN_BASE.length);
  app.on(operation.method.toUpperCase(), path, ...(steps as [MiddlewareHandler<HonoEnv>]), answer);
}

/**
 * A viewer may call only what its role allows. adminAuth already refuses a viewer any
 * method but GET and HEAD; this holds for a read that only an admin may make.
 */
function requireRole(role: OperatorRole) {
  return createMiddleware<HonoEnv>(async function requireRole(c, next) {
    if (role === 'admin' && c.get('operator')?.role !== 'admin') {
      throw new GatewayError('OPERATOR_READ_ONLY');
    }
    await next();
  });
}
