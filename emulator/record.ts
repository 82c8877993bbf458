// Records every platform-side request exactly as received (tests assert what
// the upstream saw), then applies a matching fault before auth and routing,
// so a faulted request fails the same way whatever its key or path.
import type { MiddlewareHandler } from 'hono';
import { cutConnection, faultResponse } from './faults';
import type { EmuEnv } from './http';

export const CONTROL_PREFIX = '/__emulator';

/**
 * Set by app.ts on a request that came in under `/__lane/<name>/…`: a base URL with a lane
 * reaches this same platform as if it were another upstream (an isolate keeps a circuit
 * breaker per upstream), and faults can target a lane.
 */
export const LANE_HEADER = 'x-emulator-lane';

export const recordAndFault: MiddlewareHandler<EmuEnv> = async function recordAndFault(c, next) {
  if (c.req.path === CONTROL_PREFIX || c.req.path.startsWith(`${CONTROL_PREFIX}/`)) return next();
  const state = c.get('state');
  const text = c.req.method === 'GET' || c.req.method === 'HEAD' ? '' : await c.req.text();
  const body = text === '' ? null : text;
  c.set('body', body);
  const headers: Record<string, string> = {};
  c.req.raw.headers.forEach((value, name) => {
    headers[name.toLowerCase()] = value;
  });
  state.record({ method: c.req.method, path: c.req.path, query: c.req.query(), headers, body });

  const lane = c.req.header(LANE_HEADER) ?? '';
  state.count(lane);
  const key = headers['x-api-key'] ?? headers.authorization?.replace(/^Bearer\s+/i, '');
  const fault = state.takeFault(c.req.path, headers['x-request-id'], { key, lane });
  if (fault?.kind === 'lost_answer') {
    // The platform acts, then its answer never arrives.
    await next();
    cutConnection(c);
    return new Response(null, { status: 499 });
  }
  const faulty = fault && (await faultResponse(c, fault));
  if (faulty) return faulty;
  await next();
};
