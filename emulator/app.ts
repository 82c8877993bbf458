// Assembles the emulator: state injection, recording/faults, platform routes,
// control routes, and envelope-shaped 404s and errors.
import { Hono } from 'hono';
import { controlRoutes } from './control';
import { dashboardRoutes } from './dashboard';
import { ApiError, type EmuEnv, envelope } from './http';
import { CONTROL_PREFIX, LANE_HEADER, recordAndFault } from './record';
import { accountRoutes } from './routes';
import { sessionRoutes } from './sessions';
import { EmulatorState } from './store';
import { uploadRoutes } from './uploads';
import { usageSinkRoutes } from './usage-sink';

export interface Emulator {
  app: Hono<EmuEnv>;
  state: EmulatorState;
}

export interface EmulatorOptions {
  /** Added to every platform route's answer (not the control routes), in ms; e.g. a network round trip. */
  latencyMs?: number;
  /**
   * The key usage batches are signed with (the gateway's USAGE_SINK_SECRET), so the usage
   * sink checks signatures; default EMULATOR_USAGE_SECRET, else it does not check.
   */
  usageSecret?: string;
}

/** A fresh emulator with its own seeded state (usable in-process via app.request()). */
export function createEmulator(opts: EmulatorOptions = {}): Emulator {
  const state = new EmulatorState();
  const platform = new Hono<EmuEnv>();
  const app = platform;
  app.use('*', async (c, next) => {
    c.set('state', state);
    await next();
  });
  const latencyMs = opts.latencyMs ?? 0;
  if (latencyMs > 0)
    app.use('*', async (c, next) => {
      await next();
      if (c.req.path !== CONTROL_PREFIX && !c.req.path.startsWith(`${CONTROL_PREFIX}/`))
        await new Promise((resolve) => setTimeout(resolve, latencyMs));
    });
  app.use('*', recordAndFault);
  app.route(
    `${CONTROL_PREFIX}/usage`,
    usageSinkRoutes(opts.usageSecret ?? process.env.EMULATOR_USAGE_SECRET),
  );
  app.route(CONTROL_PREFIX, controlRoutes);
  app.route('/', accountRoutes);
  app.route('/', sessionRoutes);
  app.route('/', uploadRoutes);
  app.route('/', dashboardRoutes);
  app.notFound((c) => c.json(envelope(404, 'Not Found', null), 404));
  app.onError((err, c) => {
    if (err instanceof ApiError)
      return new Response(JSON.stringify(envelope(err.code, err.message, null)), {
        status: err.status,
        headers: { 'content-type': 'application/json' },
      });
    console.error('[emulator] unexpected error', err);
    return c.json(envelope(500, 'internal emulator error', null), 500);
  });
  return { app: withLanes(platform), state };
}

/**
 * `/__lane/<name>/…` reaches the same platform with the prefix taken off and
 * the lane named in a header (record.ts): another upstream, as far as a
 * gateway can tell, for tests and load scripts that need their own.
 */
function withLanes(platform: Hono<EmuEnv>): Hono<EmuEnv> {
  const outer = new Hono<EmuEnv>();
  outer.all('/__lane/:lane/*', (c) => {
    const lane = c.req.param('lane');
    const url = new URL(c.req.url);
    url.pathname = url.pathname.slice(`/__lane/${lane}`.length) || '/';
    const request = new Request(url, c.req.raw);
    request.headers.set(LANE_HEADER, lane);
    return platform.fetch(request, c.env);
  });
  outer.all('*', (c) => platform.fetch(c.req.raw, c.env));
  return outer;
}
