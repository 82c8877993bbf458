/**
 * HTTP CONNECT on plain workerd: the runtime opens the tunnel before the
 * Worker can refuse it, so the refusal comes inside it, as a 405 envelope.
 *
 * Without wrangler.toml's [assets] (`staticAssets: false`): Miniflare puts an
 * asset router in front of a Worker with assets, and its proxy hands
 * `connect` on unbound ("Illegal invocation"), so locally CONNECT then gets a
 * bare 500 (docs/SECURITY.md, "HTTP CONNECT"). On Cloudflare, CONNECT never reaches a Worker.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../emulator/server';
import { type GatewayHost, startGateway } from '../../scripts/workerd-host';

let emulator: RunningEmulator;
let gateway: GatewayHost;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
  gateway = await startGateway({ platformBaseUrl: emulator.url, staticAssets: false });
}, 120_000);

afterAll(async () => {
  await gateway?.stop();
  await emulator?.close();
});

/** Sends raw bytes and collects everything until the gateway closes (bounded). */
function raw(request: string): Promise<string> {
  const { hostname, port } = new URL(gateway.url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(request));
    let out = '';
    socket.on('data', (d) => {
      out += d;
    });
    socket.on('close', () => resolve(out));
    socket.on('error', () => resolve(out));
    setTimeout(() => socket.destroy(), 5000);
  });
}

describe('CONNECT', () => {
  it('gets the platform envelope with code 40500 and a request id, then the tunnel closes', async () => {
    const answer = await raw('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    const inside = answer.slice(answer.indexOf('\r\n\r\n') + 4);
    expect(inside).toMatch(/^HTTP\/1\.1 405 /);
    const body = JSON.parse(inside.slice(inside.indexOf('\r\n\r\n') + 4));
    expect(body).toMatchObject({ code: 40500, data: { request_id: expect.any(String) } });
    expect(answer).not.toContain('Internal Server Error');
  });

  it('other unusual methods get the envelope from the Worker itself', async () => {
    const answer = await raw(
      'PROPFIND /team/lists HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n',
    );
    expect(answer).toMatch(/^HTTP\/1\.1 405 /);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ code: 40500 });
  });
});
