/**
 * scripts/bench/stats.ts: the bench's per-request counts, read from a
 * gateway's GET /admin/stats, against a fake gateway in Node (the real
 * endpoint may not exist yet; then the bench prints n/a).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IsolateStats, readIsolateStats, zeroCounts } from '../../scripts/bench/stats';

const TOKEN = 'bench-stats-test-token';
let counters = zeroCounts();
let withStats = true;
let server: http.Server;
let url: string;

beforeAll(async () => {
  // Counts itself like a gateway would: every request, the stats read included, is a request.
  server = http.createServer((req, res) => {
    counters.requests++;
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (path === '/admin/stats' && withStats) {
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return send(401, { code: 40100 });
      return send(200, { code: 0, msg: 'Success', data: { isolate: counters } });
    }
    if (path === '/work') {
      counters.kv_reads += 1;
      counters.guard_calls += 1;
      // Refused, by a guard call every other time (a flood's refusals, counted apart).
      counters.limit_refusals += 1;
      if (counters.limit_refusals % 2 === 0) counters.limit_refusals_asked += 1;
      return send(429, { code: 42900 });
    }
    send(404, { code: 40400, msg: 'Not Found', data: null });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('bench stats', () => {
  it('hands out each interval’s change, less the stats read itself', async () => {
    withStats = true;
    const stats = new IsolateStats(url, TOKEN);
    await stats.start();
    expect(stats.note).toBeUndefined();
    for (let i = 0; i < 10; i++) await (await fetch(`${url}/work`)).arrayBuffer();
    expect(await stats.delta()).toEqual({
      requests: 10,
      kv_reads: 10,
      cache_api_calls: 0,
      guard_calls: 10,
      limit_refusals: 10,
      limit_refusals_asked: 5,
    });
    expect(await stats.delta()).toEqual({
      requests: 0,
      kv_reads: 0,
      cache_api_calls: 0,
      guard_calls: 0,
      limit_refusals: 0,
      limit_refusals_asked: 0,
    });
  });

  it('says n/a when a counter goes backwards (another isolate)', async () => {
    withStats = true;
    const stats = new IsolateStats(url, TOKEN);
    await stats.start();
    counters = zeroCounts();
    expect(await stats.delta()).toMatch(/backwards/);
    expect(stats.note).toMatch(/backwards/);
  });

  it('says n/a when the gateway has no GET /admin/stats', async () => {
    withStats = false;
    expect(await readIsolateStats(url, TOKEN)).toBe('no GET /admin/stats (404)');
    const stats = new IsolateStats(url, TOKEN);
    await stats.start();
    expect(stats.note).toBe('no GET /admin/stats (404)');
    expect(await stats.delta()).toBe('no GET /admin/stats (404)');
  });

  it('says why when the answer is not the expected shape', async () => {
    withStats = true;
    expect(await readIsolateStats(url, 'wrong-token')).toMatch(/HTTP 401/);
  });
});
