// Test control endpoints under /__emulator: no auth, never recorded, plain
// JSON (not the platform envelope) so they cannot be mistaken for platform data.
import { Hono } from 'hono';
import { parseFault } from './faults';
import { ApiError, type EmuEnv } from './http';

export const controlRoutes = new Hono<EmuEnv>()
  .get('/health', (c) => c.json({ ok: true }))
  .get('/requests', (c) => c.json(c.get('state').requestsFor(c.req.query('request_id'))))
  .delete('/requests', (c) => {
    c.get('state').requests = [];
    return c.json({ ok: true });
  })
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
  .post('/reset', (c) => {
    c.get('state').reset();
    return c.json({ ok: true });
  });
