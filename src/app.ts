/**
 * newApp(): the gateway's middleware chain, error handling and route mounting.
 * Request order: request id → settings → request log → trace context → (health, OpenAPI and
 * docs | OAuth) → CORS → bearer challenges → (MCP | operator API | browser tokens |
 * session event stream | usage | the token's own view | the partner's apps and keys |
 * platform routes).
 */
import { type ErrorHandler, Hono } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { requestId } from 'hono/request-id';
import { adminRoutes } from './admin';
import { browserTokenRoutes } from './browser/mint';
import { sessionEventRoutes } from './browser/ws-proxy';
import { errorAnswer, errorResponse, GatewayError, ok } from './errors';
import { frontPage } from './front-page';
import { log } from './log';
import { mcpRoutes } from './mcp/route';
import { notePrincipal } from './middleware/auth';
import { bearerChallenges } from './middleware/bearer';
import { browserCors } from './middleware/cors';
import { oauthRoutes } from './oauth/routes';
import { operationId } from './observability/operation-id';
import { requestLog } from './observability/request-log';
import { traceContext } from './observability/trace';
import { toolCallOf } from './observability/via';
import { openApiRoutes } from './openapi/routes';
import { partnerRoutes } from './partner/routes';
import { platformRoutes } from './proxy';
import { loadSettings } from './settings';
import { count } from './stats';
import { ownTokenRoutes } from './token-route';
import type { HonoEnv } from './types/context';
import { usageRoutes } from './usage-route';

const REQUEST_ID_HEADER = 'X-Request-ID';

export function newApp(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();
  const onError: ErrorHandler<HonoEnv> = (err, c) =>
    errorResponse(c, asGatewayError(err, c.get('requestId')));

  app.use(requestId({ headerName: REQUEST_ID_HEADER, limitLength: 128 }));
  app.use(async (c, next) => {
    // An MCP tool call is counted once, as the /mcp request that carried it.
    if (!toolCallOf(c.req.raw)) count('requests');
    c.set('settings', loadSettings(c.env));
    await next();
  });
  app.use(requestLog());
  app.use(traceContext());

  // For load balancers and readiness probes: answers once settings parse; no token, no upstream.
  app.get('/healthz', operationId('healthz'), (c) => c.json(ok({ status: 'ok' })));
  // For a person at the gateway's address: where the docs, the portal and the console are.
  app.get('/', operationId('home'), frontPage);
  // The partner contract and its docs page: no CORS lookups, a token only for its own view.
  app.route('/', openApiRoutes());
  // OAuth (docs/OAUTH.md): its endpoints answer browsers by their own CORS rules.
  app.route('/', oauthRoutes());
  app.use(browserCors());
  // Every 401 of a gateway token says where to get one (RFC 9728).
  app.use(bearerChallenges());
  // MCP: each tool call is sent through this same app as the operation's own request.
  app.route(
    '/',
    mcpRoutes((request, c) => Promise.resolve(app.fetch(request, c.env, c.executionCtx))),
  );
  app.route('/admin', adminRoutes());
  app.route('/', browserTokenRoutes());
  app.route('/', sessionEventRoutes());
  app.route('/', usageRoutes());
  app.route('/', ownTokenRoutes());
  app.route('/', partnerRoutes());
  app.route('/', platformRoutes(onError));

  app.notFound(async (c) => {
    // Counted in the tenant's usage history when a valid token asked (middleware/auth.ts).
    await notePrincipal(c);
    return errorAnswer(c, 'NOT_FOUND', {
      message: `No route for ${c.req.method} ${c.req.path}; ${whereRoutesAre(c.req.path)}`,
    });
  });
  app.onError(onError);
  return app;
}

/** Where a caller who missed finds the routes: the partner docs, or the operator API's. */
function whereRoutesAre(path: string): string {
  return path === '/admin' || path.startsWith('/admin/')
    ? 'the operator API is described in docs/OPERATING.md'
    : 'the routes are at /docs and /openapi.json';
}

/** Anything that is not already a GatewayError is logged and hidden behind a generic 500. */
function asGatewayError(err: unknown, requestId: string | undefined): GatewayError {
  if (err instanceof GatewayError) return err;
  if (err instanceof HTTPException && err.status === 413) {
    return new GatewayError('PAYLOAD_TOO_LARGE');
  }
  if (err instanceof HTTPException && err.status === 400) return new GatewayError('BAD_REQUEST');
  // Internal detail stays in the log; query strings are cut in case one carried a key.
  const detail =
    err instanceof Error ? `${err.name}: ${err.message}`.replace(/\?\S*/g, '?…') : typeof err;
  log.error('unhandled', { request_id: requestId, error: detail.slice(0, 300) });
  return new GatewayError('INTERNAL');
}
