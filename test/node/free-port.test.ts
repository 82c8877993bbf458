/**
 * Ports for the local stacks (scripts/free-port.ts, docs/TESTING.md "Ports"):
 * picked outside the kernel's ephemeral range, so a socket bound to port 0
 * (workerd binds several) can never be handed one before it is used.
 */
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  ephemeralRange,
  FALLBACK_EPHEMERAL,
  freePort,
  insideEphemeral,
  LOWEST_PICKED,
  pickableRanges,
  portsInsideEphemeral,
} from '../../scripts/free-port';

/** A port-0 bind, as workerd's own sockets make: the port the kernel handed out. */
function portZero(): Promise<{ port: number; close: () => Promise<void> }> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({ port, close: () => new Promise((r) => server.close(() => r())) });
    });
  });
}

describe('the kernel ephemeral range', () => {
  it("is read from Linux's setting, else IANA's dynamic range", () => {
    expect(ephemeralRange(() => '32768\t60999\n')).toEqual([32768, 60999]);
    expect(ephemeralRange(() => '1024 4999')).toEqual([1024, 4999]);
    for (const broken of ['', 'x y', '70000 80000', '5000 4000']) {
      expect(ephemeralRange(() => broken)).toEqual(FALLBACK_EPHEMERAL);
    }
    expect(
      ephemeralRange(() => {
        throw new Error('ENOENT');
      }),
    ).toEqual(FALLBACK_EPHEMERAL);
  });

  it('leaves the ports to pick from: from LOWEST_PICKED up, around the range', () => {
    expect(pickableRanges([32768, 60999])).toEqual([
      [LOWEST_PICKED, 32767],
      [61000, 65535],
    ]);
    expect(pickableRanges(FALLBACK_EPHEMERAL)).toEqual([[LOWEST_PICKED, 49151]]);
    expect(pickableRanges([1024, 4999])).toEqual([[LOWEST_PICKED, 65535]]);
    expect(pickableRanges([1024, 65535])).toEqual([]);
  });
});

describe('freePort', () => {
  it("never returns a port inside this machine's ephemeral range, and each one once", async () => {
    const range = ephemeralRange();
    const ports = new Set<number>();
    for (let i = 0; i < 200; i++) {
      const port = await freePort();
      expect(insideEphemeral(port, range), `${port} in ${range.join('-')}`).toBe(false);
      expect(port).toBeGreaterThanOrEqual(LOWEST_PICKED);
      ports.add(port);
    }
    expect(ports.size).toBe(200);
  });

  it('picks from every pickable range, and skips a port something listens on', async () => {
    const range: [number, number] = [32768, 60999];
    // Ports 10000-32767, then 61000-65535: 27304 of them, picked by index.
    const size = 32767 - LOWEST_PICKED + 1 + (65535 - 61000 + 1);
    const indexOf = (port: number) => (port <= 32767 ? port - LOWEST_PICKED : 22768 + port - 61000);
    expect(await freePort(range, () => 0)).toBe(LOWEST_PICKED);
    expect(await freePort(range, () => (size - 0.5) / size)).toBe(65535);
    // Something listens on a pickable port: asked for it first, freePort moves on to the next.
    const busy = await freePort(range);
    const server = createServer();
    await new Promise<void>((r) => server.listen(busy, '127.0.0.1', () => r()));
    try {
      const asks = [indexOf(busy), (indexOf(busy) + 1) % size].map((i) => (i + 0.5) / size);
      const picked = await freePort(range, () => asks.shift() ?? Math.random());
      expect(picked).not.toBe(busy);
      expect(insideEphemeral(picked, range)).toBe(false);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('gives ports that port-0 sockets are not handed while they wait to be used', async () => {
    const range = ephemeralRange();
    const picked = await freePort();
    // Many sockets bound to port 0 meanwhile, as workerd's are: none gets the picked port.
    const zeros = await Promise.all(Array.from({ length: 50 }, portZero));
    try {
      for (const z of zeros) {
        expect(z.port).not.toBe(picked);
        expect(insideEphemeral(z.port, range)).toBe(true);
      }
    } finally {
      await Promise.all(zeros.map((z) => z.close()));
    }
  });

  it('refuses when no port outside the range is left, saying so', async () => {
    await expect(freePort([1024, 65535])).rejects.toThrow(/ephemeral range 1024-65535/);
  });
});

describe('npm start', () => {
  it('warns of a port set inside the range, naming its setting; its defaults are outside', () => {
    const range: [number, number] = [32768, 60999];
    expect(portsInsideEphemeral({ PORT: 8787, EMULATOR_PORT: 8790 }, range)).toEqual([]);
    expect(portsInsideEphemeral({ PORT: 40000 }, range)).toEqual([
      "port 40000 (PORT) is inside the kernel's ephemeral range 32768-60999: a socket bound to port 0 may take it first; a port outside it is safer",
    ]);
  });
});
