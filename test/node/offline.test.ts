/**
 * The local stack (`npm start`, the Node tests) talks to nothing but
 * loopback (README). wrangler asks registry.npmjs.org for its latest version while it
 * prints its banner, through the proxy the environment names: with a proxy on loopback
 * that only records what it is asked for, the stack must start without asking it anything.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Stack } from '../../scripts/stack';
import { freshStack } from './fresh-stack';

const STATE = '.wrangler/offline-test-state';
const PROXY_VARS = [
  'HTTPS_PROXY',
  'HTTP_PROXY',
  'https_proxy',
  'http_proxy',
  'NO_PROXY',
  'no_proxy',
];

const asked: string[] = [];
let proxy: Server;
let stack: Stack | undefined;
let scratch: string;
const saved = Object.fromEntries(
  [...PROXY_VARS, 'TMPDIR'].map((name) => [name, process.env[name]]),
);

beforeAll(async () => {
  proxy = createServer((req, res) => {
    asked.push(`${req.method} ${req.url}`);
    res.writeHead(502).end();
  });
  // An https fetch through a proxy starts with CONNECT host:443.
  proxy.on('connect', (req, socket) => {
    asked.push(`CONNECT ${req.url}`);
    socket.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const proxyUrl = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
  for (const name of PROXY_VARS) {
    process.env[name] = /^no_proxy$/i.test(name) ? 'localhost,127.0.0.1,::1' : proxyUrl;
  }
  // wrangler keeps the registry's answer for an hour in <tmpdir>/update-check: start without it.
  scratch = mkdtempSync(path.join(tmpdir(), 'offline-test-'));
  process.env.TMPDIR = scratch;
  stack = await freshStack(STATE);
});

afterAll(async () => {
  await stack?.stop();
  await new Promise((resolve) => proxy?.close(resolve));
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  rmSync(scratch, { recursive: true, force: true });
});

describe('the local stack offline', () => {
  it('starts and answers without asking the proxy for anything', async () => {
    const health = await fetch(`${stack!.gatewayUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(asked).toEqual([]);
  });
});
