/**
 * The bench's own measuring parts: the load generator on its own thread
 * (run under tsx in a child process, as `npm run bench` runs it) and the
 * per-process CPU readings from /proc (Linux only).
 */
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cpuMs, pidListeningOn } from '../../scripts/bench/cpu';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface RoundSummary {
  sent: number;
  ok: number;
  errors: number;
  latencies: number;
  sorted: boolean;
  samples: string[];
}

describe('the load generator thread', () => {
  it('sends every request, keeps its connections across rounds, reports failures and refuses rounds once stopped', async () => {
    const out = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ['--import', 'tsx', path.join('test', 'node', 'fixtures', 'load-thread-run.ts')],
        { cwd: ROOT, timeout: 60_000 },
        (err, stdout, stderr) =>
          err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
      ),
    );
    const { rounds, connections, afterClose } = JSON.parse(
      out.trim().split('\n').at(-1) ?? '{}',
    ) as { rounds: RoundSummary[]; connections: number; afterClose: string };
    const [first, second, failing] = rounds;
    for (const round of [first, second]) {
      expect(round).toMatchObject({ sent: 200, ok: 200, errors: 0, latencies: 200, sorted: true });
    }
    expect(failing).toMatchObject({ sent: 200, ok: 0, errors: 200 });
    expect(failing?.samples[0]).toMatch(/^HTTP 503/);
    // Keep-alive: 4 connections for the two rounds to one target, 4 more for the other.
    expect(connections).toBeLessThanOrEqual(8);
    expect(afterClose).toMatch(/^load thread exited/);
  });
});

describe.runIf(process.platform === 'linux')('CPU readings from /proc', () => {
  it('finds the process listening on a port and reads its CPU time as it grows', async () => {
    const server = http.createServer((_req, res) => res.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      expect(pidListeningOn(port)).toBe(process.pid);
      const before = cpuMs(process.pid);
      expect(before).not.toBeNull();
      // Busy until the reading has grown by 50 ms: on a loaded machine that takes more than
      // 50 ms of wall time, so the loop waits for the reading (bounded), not for a time.
      const grown = () => (cpuMs(process.pid) ?? 0) - (before ?? 0);
      const deadline = Date.now() + 10_000;
      while (grown() < 50 && Date.now() < deadline) {
        const spin = Date.now() + 10;
        while (Date.now() < spin) Math.sqrt(Math.random());
      }
      expect(grown()).toBeGreaterThanOrEqual(50);
    } finally {
      server.close();
    }
  });

  it('answers null for a port nobody listens on and a process that does not exist', async () => {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    expect(pidListeningOn(port)).toBeNull();
    expect(cpuMs(2 ** 22 + 7)).toBeNull();
    expect(cpuMs(null)).toBeNull();
  });
});
