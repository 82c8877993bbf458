/**
 * Mounts every platform operation: the built-in table's entries as routes, and
 * the operations an operator declared (PLATFORM_OPERATIONS) behind one matcher,
 * each through the same chain: name the operation and take it as configured,
 * authenticate, check scope, validate, limit, claim an Idempotency-Key (writes
 * that send one), then forward (through the cache for cacheable reads) and
 * answer as forward.ts says: platform secrets masked for tokens that may not see
 * them. A path an operation takes with a method it does not gets a 405 envelope.
 */
import { type Context, type ErrorHandler, Hono, type MiddlewareHandler } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { GatewayError } from './errors';
import { forward } from './forward';
import { requireScope, tenantAuth } from './middleware/auth';
import { idempotency } from './middleware/idempotency';
import { tenantLimits } from './middleware/limits';
import { validateInput } from './middleware/validate';
import { oncePer } from './once-per';
import { type Catalog, catalogOf } from './operations/catalog';
import { BUILT_IN_OPERATIONS } from './operations/table';
import type { HonoEnv } from './types/context';
import type { ConfiguredOperation, PlatformOperation, PlatformReader } from './types/operations';
import type { ForwardOutcome } from './types/outcomes';
import { parseEnvelope } from './upstream/normalize';

/** The operation as configured, which nameOperation() put in the context. */
function operationOf(c: Context<HonoEnv>): ConfiguredOperation {
  const operation = c.get('operation');
  if (!operation) throw new GatewayError('INTERNAL', { message: 'Operation not named' });
  return operation;
}

/**
 * `onError` is the app's error handler: a declared operation's chain answers its errors
 * with it where they are thrown, as Hono does for a built-in route's (composed()).
 */
export function platformRoutes(
  onError: ErrorHandler<HonoEnv>,
  operations: readonly PlatformOperation[] = BUILT_IN_OPERATIONS,
): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();
  for (const op of operations) app.on(op.method, [op.path], ...operationChain(op));
  for (const [path, methods] of methodsByPath(operations)) {
    app.all(path, () => {
      throw methodNotAllowed(path, methods);
    });
  }
  // Reached only where no built-in path matched: the declared operations, if any.
  app.all('*', declaredOperations(onError));
  return app;
}

/** Everything an operation's request goes through, in order, ending in its answer. */
function operationChain(op: PlatformOperation): MiddlewareHandler<HonoEnv>[] {
  return [
    nameOperation(op),
    tenantAuth(),
    requireScope(op),
    validateInput(op),
    tenantLimits(op.group, (c) => operationOf(c).cost),
    // A GET takes no Idempotency-Key: no step at all (each step is an async call per request).
    ...(op.method === 'GET' ? [] : [idempotency(op)]),
    async (c) => {
      const configured = operationOf(c);
      await configured.check?.(c.get('input'), platformReader(c, catalogOf(c.get('settings'))));
      const outcome = await forward(c, configured, c.get('input'));
      // For the steps around this one: idempotency (did the platform act?), the request log.
      c.set('forwarded', outcome);
      if (!outcome.answer) throw outcome.error;
      const status = contentfulStatus(outcome.answer.status);
      return c.body(outcome.answer.body, status, answerHeaders(configured, outcome));
    },
  ];
}

/**
 * A declared operation's request: matched here (Hono's router holds only built-ins), then
 * its chain, composed once per operation on first use.
 */
function declaredOperations(onError: ErrorHandler<HonoEnv>): MiddlewareHandler<HonoEnv> {
  const chainOf = oncePer((op: ConfiguredOperation) => composed(operationChain(op), onError));
  return async (c, next) => {
    const match = catalogOf(c.get('settings')).matchDeclared(c.req.method, c.req.path);
    if (!match) return next();
    if ('allow' in match) throw methodNotAllowed(c.req.path, match.allow);
    c.set('declaredParams', match.params);
    await chainOf(match.operation)(c, next);
  };
}

/**
 * Steps run as Hono runs a route's: an error a step throws becomes the error answer where
 * it is thrown, so each step before it finds that answer when its next() returns, as on a
 * built-in route. (hono/combine's every() has no error handler: the error passed through
 * the steps, and the idempotency step neither kept nor released its key's claim.)
 */
function composed(
  steps: MiddlewareHandler<HonoEnv>[],
  onError: ErrorHandler<HonoEnv>,
): MiddlewareHandler<HonoEnv> {
  return async (c, next) => {
    const run = async (i: number): Promise<void> => {
      const step = steps[i];
      if (!step) return next();
      let answer: Response | undefined;
      try {
        answer = (await step(c, () => run(i + 1))) || undefined;
      } catch (err) {
        if (!(err instanceof Error)) throw err;
        c.error = err;
        c.res = await onError(err, c);
        return;
      }
      if (answer && !c.finalized) c.res = answer;
    };
    await run(0);
  };
}

function methodNotAllowed(path: string, methods: readonly string[]): GatewayError {
  const allow = methods.join(', ');
  return new GatewayError('METHOD_NOT_ALLOWED', {
    message: `Method not allowed; ${path} accepts ${allow}`,
    headers: { Allow: allow },
  });
}

/**
 * Names the operation (its log line and usage history say it), and sets it as this
 * request's settings configure it, once for every later step.
 */
function nameOperation(op: PlatformOperation) {
  return createMiddleware<HonoEnv>(async function nameOperation(c, next) {
    c.set('operationId', op.id);
    const configured = catalogOf(c.get('settings')).byId.get(op.id);
    if (!configured) throw new GatewayError('INTERNAL', { message: `No operation ${op.id}` });
    c.set('operation', configured);
    await next();
  });
}

/** The answer's headers: JSON, and for cacheable reads where the answer came from and its age. */
function answerHeaders(op: ConfiguredOperation, outcome: ForwardOutcome): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
  if (op.cache && outcome.cache) {
    headers['X-Cache'] = outcome.cache;
    headers.Age = String(outcome.age);
  }
  if (outcome.staleReason) {
    // Stale because the platform failed (stale-if-error): said for machines and for people.
    headers['X-Stale-Reason'] = outcome.staleReason;
    headers.Warning = `111 - "stale: ${STALE_TEXT[outcome.staleReason] ?? 'platform failed'}"`;
  }
  return headers;
}

/** The Warning header's words for each stale-if-error reason (docs/RESILIENCE.md). */
const STALE_TEXT: Record<string, string> = {
  breaker_open: 'platform unavailable',
  platform_pause: 'platform asked for a pause',
  timeout: 'platform timed out',
  unreachable: 'platform unreachable',
  platform_error: 'platform error',
};

/** A status that cannot carry the envelope is no answer to pass on. */
function contentfulStatus(status: number): ContentfulStatusCode {
  if (!isContentful(status)) throw new GatewayError('UPSTREAM_HTTP_ERROR');
  return status;
}

/**
 * Lets an operation's check read another operation's data with this request's tenant,
 * through the cache.
 */
function platformReader(c: Context<HonoEnv>, catalog: Catalog): PlatformReader {
  return {
    async data(operationId) {
      const op = catalog.byId.get(operationId);
      if (!op) throw new GatewayError('INTERNAL', { message: `No operation ${operationId}` });
      const outcome = await forward(
        c,
        op,
        { params: {}, query: {} },
        { callerCacheControl: false },
      );
      // The request's platform call so far: the operation's own, if the check lets it go, follows.
      c.set('forwarded', outcome);
      if (!outcome.answer) throw outcome.error;
      const result = outcome.answer;
      const envelope = result.envelope ?? parseEnvelope(result.body);
      if (envelope?.code !== 0) {
        throw new GatewayError('UPSTREAM_HTTP_ERROR', {
          message: `Platform refused ${operationId}: ${envelope?.msg ?? 'no envelope'}`,
          details: { upstream_code: envelope?.code },
        });
      }
      return envelope.data;
    },
  };
}

/** Statuses that may carry a body; the platform's envelopes always do. */
function isContentful(status: number): status is ContentfulStatusCode {
  return status >= 200 && status <= 599 && status !== 204 && status !== 205 && status !== 304;
}

function methodsByPath(operations: readonly PlatformOperation[]): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const op of operations) map.set(op.path, [...(map.get(op.path) ?? []), op.method]);
  return map;
}
