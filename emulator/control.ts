// Test control endpoints under /__emulator: no auth, never recorded, plain
// JSON (not the platform envelope) so they cannot be mistaken for platform data.
import { Hono } from 'hono';
import { isHttpUrl, parseFault } from './faults';
import { ApiError, type EmuEnv } from './http';

export const controlRoutes = new Hono<EmuEnv>()
  .get('/health', (c) => c.json({ ok: true }))
  .get('/requests', (c) => c.json(c.get('state').requestsFor(c.req.query('request_id'))))
  .delete('/requests', (c) => {
    c.get('state').requests = [];
    return c.json({ ok: true });
  })
  // Platform requests received by lane ('' for none) and sessions that exist: for load scripts.
  .get('/stats', (c) => {
    const state = c.get('state');
    return c.json({
      requests: Object.fromEntries(state.counts),
      sessions: state.accounts.reduce((n, a) => n + a.sessions.length, 0),
    });
  })
  // How much of a multipart body has arrived so far, by its x-request-id.
  .get('/receiving', (c) =>
    c.json(
      c.get('state').receiving.get(c.req.query('request_id') ?? '') ?? { bytes: 0, done: false },
    ),
  )
  .get('/faults', (c) => c.json(c.get('state').faults))
  .post('/faults', async (c) => {
    let input: unknown;
    try {
      input = await c.req.json();
    } catch {
      throw new ApiError(400, 10400, 'fault body must be JSON');
    }
    if (typeof input !== 'object' || input === null || Array.isArray(input))
      throw new ApiError(400, 10400, 'fault body must be a JSON object');
    return c.json(c.get('state').addFault(parseFault(input as Record<string, unknown>)));
  })
  .delete('/faults', (c) => {
    c.get('state').faults = [];
    return c.json({ ok: true });
  })
  // A receiver for the gateway's quota-alert webhooks: records each delivery, and can be told to fail.
  .post('/webhooks/:name/fail', async (c) => {
    const input = (await c.req.json().catch(() => null)) as {
      times?: unknown;
      status?: unknown;
      location?: unknown;
    } | null;
    const times = input?.times;
    const status = input?.status ?? 500;
    if (!Number.isInteger(times) || (times as number) < 0)
      throw new ApiError(400, 10400, 'times must be a non-negative integer');
    // 304 is refused: it cannot carry the {ok:false} body a failed delivery is answered with.
    if (
      !Number.isInteger(status) ||
      (status as number) < 300 ||
      (status as number) > 599 ||
      status === 304
    ) {
      throw new ApiError(400, 10400, 'status must be an integer from 300 to 599, not 304');
    }
    const location = input?.location;
    if (location !== undefined && !isHttpUrl(location))
      throw new ApiError(400, 10400, 'location must be an http(s) URL');
    const hook = c.get('state').webhook(c.req.param('name'));
    hook.failNext = times as number;
    hook.failStatus = status as number;
    hook.failLocation = location;
    return c.json({ ok: true });
  })
  .post('/webhooks/:name', async (c) => {
    const hook = c.get('state').webhook(c.req.param('name'));
    const headers: Record<string, string> = {};
    c.req.raw.headers.forEach((value, name) => {
      headers[name.toLowerCase()] = value;
    });
    const failed = hook.failNext > 0;
    if (failed) hook.failNext--;
    hook.deliveries.push({
      headers,
      body: await c.req.text(),
      received_at: new Date().toISOString(),
      failed,
    });
    if (!failed) return c.json({ ok: true });
    if (hook.failLocation) c.header('location', hook.failLocation);
    return c.json({ ok: false }, hook.failStatus as 500);
  })
  .get('/webhooks/:name', (c) => c.json(c.get('state').webhook(c.req.param('name')).deliveries))
  .delete('/webhooks/:name', (c) => {
    c.get('state').webhooks.delete(c.req.param('name'));
    return c.json({ ok: true });
  })
  .post('/reset', (c) => {
    c.get('state').reset();
    return c.json({ ok: true });
  });
