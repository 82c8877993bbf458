/**
 * The read path under real concurrency, on plain workerd (the built Worker,
 * over real HTTP) in front of a platform that answers at once: sustained
 * reads and revalidations of keys that keep going cold, and many requests for
 * one key held by the upstream, with and without the first client going away.
 * Every answer must be a 200, and workerd must print no warning: sharing one
 * request's upstream read with another ("different request context",
 * "Cannot perform I/O on behalf of a different request") was the defect.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PLATFORM_KEY } from '../../emulator/seed';
import { startEmulator } from '../../emulator/server';
import { type GatewayHost, startGateway } from '../../scripts/workerd-host';

/**
 * A platform that answers /team/lists at once with a real team-list envelope,
 * counts calls per page number, and can hold its next answer.
 */
class FastPlatform {
  readonly calls = new Map<string, number>();
  private hold = 0;
  private server?: http.Server;
  url = '';

  constructor(private readonly body: string) {}

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://platform');
      if (url.pathname !== '/team/lists') {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end('{"code":404,"msg":"no","data":null}');
        return;
      }
      const page = url.searchParams.get('page_num') ?? '1';
      this.calls.set(page, (this.calls.get(page) ?? 0) + 1);
      const answer = () =>
        res
          .writeHead(200, {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(this.body),
          })
          .end(this.body);
      const hold = this.hold;
      this.hold = 0;
      if (hold > 0) setTimeout(answer, hold);
      else answer();
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  holdNext(ms: number): void {
    this.hold = ms;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      this.server?.closeAllConnections();
      this.server?.close(() => resolve());
    });
  }
}

let platform: FastPlatform;
let gateway: GatewayHost;
let token: string;

beforeAll(async () => {
  // The body a real platform would send: the emulator's seeded team list.
  const emulator = await startEmulator({ port: 0 });
  const seeded = await fetch(`${emulator.url}/team/lists`, {
    headers: { authorization: DEMO_PLATFORM_KEY },
  });
  platform = new FastPlatform(await seeded.text());
  await emulator.close();
  await platform.start();

  // Limits far above this load: the test is about the read path, not about refusals.
  const limits = { policies: [{ name: 'burst', limit: 1_000_000, window_s: 10 }], quota: {} };
  gateway = await startGateway({
    platformBaseUrl: platform.url,
    vars: { DEFAULT_LIMITS: JSON.stringify(limits) },
  });
  const res = await fetch(`${gateway.url}/admin/tenants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gateway.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'read path', platform_key: DEMO_PLATFORM_KEY }),
  });
  token = ((await res.json()) as { data: { token: string } }).data.token;
}, 120_000);

afterAll(async () => {
  await gateway?.stop();
  await platform?.stop();
});

/** Lines workerd printed at warning level or above, or that name a cross-request problem. */
function runtimeWarnings(): string[] {
  return gateway
    .logs()
    .filter(
      (l) =>
        /warn|error/i.test(l.level) ||
        /different request context|Cannot perform I\/O|never generate a response/i.test(l.message),
    )
    .map((l) => `${l.level}: ${l.message.slice(0, 200)}`);
}

// Enough sockets for 64 requests to be in flight together.
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

function get(
  path: string,
  o: { signal?: AbortSignal; revalidate?: boolean } = {},
): Promise<{ status: number; body: string }> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (o.revalidate) headers['cache-control'] = 'no-cache';
  return new Promise((resolve, reject) => {
    const req = http.get(`${gateway.url}${path}`, { agent, headers, signal: o.signal }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

describe('read path under concurrency', () => {
  it('16 connections reading and revalidating a few keys for 12 s: every answer 200, no workerd warning', async () => {
    const statuses = new Map<number, number>();
    // Long enough to outlive the tenant memo (10 s): the gateway before this design
    // failed from then on (HTTP 500, "Cannot perform I/O on behalf of a different request").
    const start = Date.now();
    const until = start + 12_000;
    let n = 0;
    let pastMemo = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (Date.now() < until) {
          // 7 keys; every other read asks to revalidate, so upstream reads of a key keep
          // ending while other reads of it arrive.
          const i = n++;
          const { status } = await get(`/team/lists?page_num=${10 + (i % 7)}`, {
            revalidate: i % 2 === 0,
          });
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
          if (Date.now() - start > 10_500) pastMemo++;
        }
      }),
    );
    // Not a speed check (that is `npm run bench`): reads must keep being answered after
    // the memo has expired, which is where the old design broke.
    expect(pastMemo).toBeGreaterThan(16);
    expect(Object.fromEntries(statuses)).toEqual({ 200: n });
    expect(runtimeWarnings()).toEqual([]);
  });

  it('64 overlapping cold requests for one key, held by the upstream: one upstream call, identical bodies', async () => {
    platform.holdNext(300);
    const answers = await Promise.all(
      Array.from({ length: 64 }, () => get('/team/lists?page_num=2')),
    );
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(new Set(answers.map((a) => a.body)).size).toBe(1);
    expect(platform.calls.get('2')).toBe(1);
    expect(runtimeWarnings()).toEqual([]);
  });

  it('the same when the first client goes away while the upstream holds its answer', async () => {
    const path = '/team/lists?page_num=3';
    platform.holdNext(400);
    const first = new AbortController();
    const leader = get(path, { signal: first.signal }).catch((err: Error) => err);
    // The leader's upstream call is under way and held; then the others arrive, then it leaves.
    for (let waited = 0; platform.calls.get('3') !== 1; waited += 10) {
      if (waited > 10_000) throw new Error("the leader's upstream call never arrived");
      await new Promise((r) => setTimeout(r, 10));
    }
    const followers = Array.from({ length: 63 }, () => get(path));
    await new Promise((r) => setTimeout(r, 50));
    first.abort();
    const answers = await Promise.all(followers);
    expect(await leader).toBeInstanceOf(Error);
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(new Set(answers.map((a) => a.body)).size).toBe(1);
    expect(platform.calls.get('3')).toBe(1);
    expect(runtimeWarnings()).toEqual([]);
  });
});
