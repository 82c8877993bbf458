/**
 * The demo page's "tenant backend": serves the page and, at
 * `POST /api/browser-token`, exchanges the tenant token it keeps server-side
 * for a browser token bound to this page's origin. That exchange is the one
 * thing a tenant's own backend has to do; the token never reaches the page.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DemoOptions {
  port: number;
  gatewayUrl: string;
  /** The tenant's long-lived token; stays in this process. */
  tenantToken: string;
  host?: string;
}

const FILES: Record<string, [string, string]> = {
  '/': ['index.html', 'text/html; charset=utf-8'],
  '/app.js': ['app.js', 'text/javascript; charset=utf-8'],
};

export async function startDemo(
  opts: DemoOptions,
): Promise<{ url: string; close(): Promise<void> }> {
  const host = opts.host ?? '127.0.0.1';
  let origin = '';
  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      res.writeHead(502, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          code: 50204,
          msg: 'The demo backend could not reach the gateway',
          data: null,
        }),
      );
    });
  });
  async function handle(req: IncomingMessage, res: ServerResponse) {
    // Only this host: a page elsewhere must not reach us through DNS rebinding.
    if (`http://${req.headers.host}` !== origin) {
      res.writeHead(421, { 'content-type': 'text/plain' }).end('wrong host');
      return;
    }
    const url = new URL(req.url ?? '/', 'http://demo');
    const file = FILES[url.pathname];
    if (req.method === 'GET' && file) {
      res
        .writeHead(200, { 'content-type': file[1] })
        .end(readFileSync(new URL(file[0], import.meta.url)));
    } else if (req.method === 'GET' && url.pathname === '/config.json') {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ gateway_url: opts.gatewayUrl }));
    } else if (req.method === 'POST' && url.pathname === '/api/browser-token') {
      const ttl = Number(url.searchParams.get('ttl') ?? 600);
      const minted = await fetch(`${opts.gatewayUrl}/auth/browser-token`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${opts.tenantToken}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ origin, ttl_s: ttl }),
      });
      res.writeHead(minted.status, { 'content-type': 'application/json' }).end(await minted.text());
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
    }
  }
  await new Promise<void>((resolve) => server.listen(opts.port, host, resolve));
  const { port } = server.address() as AddressInfo;
  origin = `http://${host}:${port}`;
  return {
    url: origin,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
