// Runs the emulator on a real port: HTTP via @hono/node-server and the
// session WebSocket via `ws`, sharing one server. Run directly to start a
// standalone emulator (`npx tsx emulator/server.ts`, port from EMULATOR_PORT,
// added latency per platform answer from EMULATOR_LATENCY_MS).

import { realpathSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { createAdaptorServer } from '@hono/node-server';
import { createEmulator } from './app';
import { DEMO_PLATFORM_KEY, DEMO_SECOND_KEY, OTHER_PLATFORM_KEY } from './seed';
import { attachSessionStream } from './ws';

export interface RunningEmulator {
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Starts an emulator with fresh seeded state; port 0 picks a free port.
 * `latencyMs` delays every platform route's answer (not the control routes).
 */
export async function startEmulator(
  opts: { port?: number; host?: string; latencyMs?: number } = {},
): Promise<RunningEmulator> {
  const host = opts.host ?? '127.0.0.1';
  const { app, state } = createEmulator({ latencyMs: opts.latencyMs });
  const server = createAdaptorServer({ fetch: app.fetch }) as Server;
  const stream = attachSessionStream(server, state);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        stream.close();
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections(); // hanging (fault) requests must not keep the server open
      }),
  };
}

const runDirectly =
  process.argv[1] !== undefined &&
  import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;

if (runDirectly) {
  const emu = await startEmulator({
    port: Number(process.env.EMULATOR_PORT ?? 8790),
    host: process.env.EMULATOR_HOST ?? '127.0.0.1',
    latencyMs: Number(process.env.EMULATOR_LATENCY_MS ?? 0),
  });
  console.log(`Agent Platform emulator listening on ${emu.url}`);
  if (Number(process.env.EMULATOR_LATENCY_MS) > 0)
    console.log(`  every platform answer delayed by ${process.env.EMULATOR_LATENCY_MS} ms`);
  console.log(`  DEMO_PLATFORM_KEY  ${DEMO_PLATFORM_KEY}  (account Demo)`);
  console.log(`  DEMO_SECOND_KEY    ${DEMO_SECOND_KEY}  (account Demo, second key)`);
  console.log(`  OTHER_PLATFORM_KEY ${OTHER_PLATFORM_KEY}  (account Other)`);
  console.log(`  control: ${emu.url}/__emulator/{requests,faults,reset,health}`);
  const stop = () => void emu.close().then(() => process.exit(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
