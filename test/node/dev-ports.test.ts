/**
 * `npm start` with one of its ports taken: it names the port and the setting that
 * moves it, exits 1, and starts nothing (no raw EADDRINUSE stack).
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/free-port';

const run = promisify(execFile);
const held: Server[] = [];
afterAll(() => Promise.all(held.map((s) => new Promise((r) => s.close(r)))));

async function holdPort(): Promise<number> {
  const server = createServer();
  held.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

describe('npm start with a port taken', () => {
  it.each(['ACCESS_PORT', 'PORT'])('names %s and exits 1', async (setting) => {
    const ports: Record<string, string> = {
      PORT: String(await freePort()),
      EMULATOR_PORT: String(await freePort()),
      DEMO_PORT: String(await freePort()),
      ACCESS_PORT: String(await freePort()),
    };
    const taken = await holdPort();
    ports[setting] = String(taken);
    const out = await run('tsx', ['scripts/dev.ts'], {
      env: { ...process.env, ...ports },
      timeout: 60_000,
    }).then(
      (ok) => ({ code: 0, stderr: ok.stderr }),
      (err: { code: number; stderr: string }) => err,
    );
    expect(out.code).toBe(1);
    expect(out.stderr.trim()).toBe(
      `error: port ${taken} (${setting}) is in use on 127.0.0.1: stop what listens there, ` +
        `or start on another port with ${setting}=<port> npm start`,
    );
  });
});
