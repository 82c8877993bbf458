/**
 * `/session/ws/{session_id}`: the platform's live session event stream,
 * proxied with credential translation. The caller authenticates with a
 * gateway or browser token (header, `Sec-WebSocket-Protocol` or
 * `?access_token=`); upstream the gateway connects with the platform key in
 * the query as `api_key`, as the platform expects. Frames pass through both ways.
 */
import { type Context, Hono } from 'hono';
import { createMiddleware } from 'hono/factory';
import { GatewayError } from '../errors';
import { requireScope, tenantAuth, WS_PROTOCOL } from '../middleware/auth';
import { tenantLimits } from '../middleware/limits';
import { validated } from '../middleware/validate';
import { operationId } from '../observability/operation-id';
import type { HonoEnv } from '../types/context';
import { STREAM_SCOPE, streamParams } from './schemas';
import { closeQuietly, endWithCredentials } from './stream-standing';

/** What opening an event stream counts against the tenant's limits. */
export const WS_CONNECT_COST = 1;

export function sessionEventRoutes(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();
  app.get(
    '/session/ws/:session_id',
    operationId('session.events'),
    tenantAuth({ websocket: true }),
    requireScope(STREAM_SCOPE),
    validated('param', streamParams),
    upgradeOnly,
    tenantLimits('sessions', () => WS_CONNECT_COST),
    async (c) => {
      const upstream = await connectUpstream(c, c.req.valid('param').session_id);
      const pair = new WebSocketPair();
      const client = pair[0];
      const server = pair[1];
      server.accept();
      upstream.accept();
      pipe(server, upstream);
      pipe(upstream, server);
      endWithCredentials(c, server, upstream);
      // A browser that offered subprotocols must get one of them back; the token is never echoed.
      const offered = (c.req.header('sec-websocket-protocol') ?? '')
        .split(',')
        .map((p) => p.trim());
      const headers: Record<string, string> = offered.includes(WS_PROTOCOL)
        ? { 'Sec-WebSocket-Protocol': WS_PROTOCOL }
        : {};
      return new Response(null, { status: 101, webSocket: client, headers });
    },
  );
  return app;
}

/** Checked before the limiter counts anything. */
const upgradeOnly = createMiddleware<HonoEnv>(async (c, next) => {
  if (c.req.header('upgrade')?.toLowerCase() !== 'websocket') {
    throw new GatewayError('UPGRADE_REQUIRED');
  }
  await next();
});

async function connectUpstream(c: Context<HonoEnv>, sessionId: string): Promise<WebSocket> {
  const settings = c.get('settings');
  const trace = c.get('trace');
  const url = new URL(`${settings.PLATFORM_BASE_URL}/session/ws/${encodeURIComponent(sessionId)}`);
  url.searchParams.set('api_key', c.get('tenant').platform_key);
  // The deadline covers the handshake only: once upgraded, the stream may live on.
  const handshake = new AbortController();
  const timer = setTimeout(() => handshake.abort(), settings.UPSTREAM_TIMEOUT_MS);
  let res: Response;
  try {
    res = await fetch(url, {
      headers: {
        upgrade: 'websocket',
        'x-request-id': c.get('requestId'),
        // The request's trace goes on to the platform, as for every other call.
        ...(trace ? { traceparent: trace.traceparent } : {}),
      },
      // The URL carries the platform key: never follow it anywhere else.
      redirect: 'manual',
      signal: handshake.signal,
    });
  } catch {
    // Never let the URL (it carries the key) reach a message or a log.
    throw handshake.signal.aborted
      ? new GatewayError('UPSTREAM_TIMEOUT', {
          message: `Platform did not answer within ${settings.UPSTREAM_TIMEOUT_MS} ms`,
        })
      : new GatewayError('UPSTREAM_UNREACHABLE');
  } finally {
    clearTimeout(timer);
  }
  if (res.status === 101 && res.webSocket) return res.webSocket;
  await res.body?.cancel();
  const details = { upstream_status: res.status };
  throw new GatewayError(
    res.status === 401 || res.status === 403 ? 'UPSTREAM_AUTH_REJECTED' : 'UPSTREAM_HTTP_ERROR',
    { details },
  );
}

/** Frames from `from` go to `to`; a close on one side closes the other. */
function pipe(from: WebSocket, to: WebSocket) {
  from.addEventListener('message', (event) => {
    if (to.readyState === WebSocket.OPEN) to.send(event.data);
  });
  from.addEventListener('close', (event) => closeQuietly(to, event.code, event.reason));
  from.addEventListener('error', () => closeQuietly(to, 1011, 'peer error'));
}
