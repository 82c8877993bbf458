/**
 * Loopback ports for the local stacks: `npm start`, the bench, the chaos run, the
 * Node tests' stacks and the workers tests' emulator (docs/TESTING.md, "Ports").
 *
 * A port is picked outside the kernel's ephemeral range, and checked free by
 * binding it. Binding port 0 and releasing it (as before) handed out a port from
 * that range, which the kernel could give again to any socket bound to port 0
 * before we used it: workerd binds several (Miniflare's entry socket, direct
 * sockets), and on Ubuntu 24.04 `npm run bench` failed with
 * `ERR_ADDRESS_IN_USE (socket "direct:0:default")`. A port outside the range is
 * never handed to a port-0 socket.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** [lowest, highest], both included. */
export type PortRange = [number, number];

/** Where the kernel's range is not readable (macOS, the BSDs, Windows): IANA's dynamic ports. */
export const FALLBACK_EPHEMERAL: PortRange = [49152, 65535];
/** Ports below this are left alone: well-known services, and `npm start`'s own (8787 to 8792). */
export const LOWEST_PICKED = 10_000;
const HIGHEST_PORT = 65_535;
const TRIES = 200;

/** The kernel's ephemeral range, from /proc/sys/net/ipv4/ip_local_port_range, else IANA's. */
export function ephemeralRange(read: () => string = readLocalPortRange): PortRange {
  try {
    const m = /^\s*(\d+)\s+(\d+)\s*$/.exec(read());
    const [lo, hi] = [Number(m?.[1]), Number(m?.[2])];
    if (m && lo >= 1 && lo <= hi && hi <= HIGHEST_PORT) return [lo, hi];
  } catch {
    // Not Linux, or not readable: the fallback.
  }
  return FALLBACK_EPHEMERAL;
}

const readLocalPortRange = () => readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8');

/** The ranges a port is picked from: LOWEST_PICKED to 65535, less the ephemeral range. */
export function pickableRanges([lo, hi]: PortRange): PortRange[] {
  const ranges: PortRange[] = [
    [LOWEST_PICKED, Math.min(lo - 1, HIGHEST_PORT)],
    [Math.max(hi + 1, LOWEST_PICKED), HIGHEST_PORT],
  ];
  return ranges.filter(([a, b]) => a <= b);
}

/** Whether a port is one the kernel may hand to a socket bound to port 0. */
export function insideEphemeral(port: number, range = ephemeralRange()): boolean {
  return port >= range[0] && port <= range[1];
}

/** Ports this process has handed out: never twice, even when the first is not bound yet. */
const handedOut = new Set<number>();

/**
 * A loopback port nothing listens on now, outside the ephemeral range (so no port-0
 * socket can take it before it is used), not handed out before by this process.
 */
export async function freePort(
  range = ephemeralRange(),
  random: () => number = Math.random,
): Promise<number> {
  const ranges = pickableRanges(range);
  const size = ranges.reduce((n, [a, b]) => n + b - a + 1, 0);
  if (size === 0) {
    throw new Error(
      `no port from ${LOWEST_PICKED} up lies outside the kernel's ephemeral range ${range[0]}-${range[1]} (/proc/sys/net/ipv4/ip_local_port_range): narrow it, or set the ports yourself`,
    );
  }
  for (let i = 0; i < TRIES; i++) {
    const port = nth(ranges, Math.floor(random() * size));
    if (handedOut.has(port) || (await portTaken(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free loopback port found in ${TRIES} tries outside ${range[0]}-${range[1]}`);
}

/** The n-th port of the ranges, counted from 0. */
function nth(ranges: PortRange[], n: number): number {
  let left = n;
  for (const [a, b] of ranges) {
    if (left <= b - a) return a + left;
    left -= b - a + 1;
  }
  throw new Error(`port index ${n} is past the ranges`);
}

/** Whether something listens on this loopback port now (it cannot be bound). */
export async function portTaken(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(true));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(false)));
  });
}

/**
 * The first of these ports that is taken, as a sentence naming the setting that
 * moves it (`npm start`'s PORT, EMULATOR_PORT, DEMO_PORT, ACCESS_PORT); null when
 * all are free.
 */
export async function portsInUse(ports: Record<string, number>): Promise<string | null> {
  for (const [setting, port] of Object.entries(ports)) {
    if (await portTaken(port)) {
      return (
        `port ${port} (${setting}) is in use on 127.0.0.1: stop what listens there, ` +
        `or start on another port with ${setting}=<port> npm start`
      );
    }
  }
  return null;
}

/**
 * A warning for each of these ports inside the ephemeral range (a socket bound to port 0,
 * workerd's among them, may take it first), naming its setting; none for the defaults.
 */
export function portsInsideEphemeral(
  ports: Record<string, number>,
  range = ephemeralRange(),
): string[] {
  return Object.entries(ports)
    .filter(([, port]) => insideEphemeral(port, range))
    .map(
      ([setting, port]) =>
        `port ${port} (${setting}) is inside the kernel's ephemeral range ${range[0]}-${range[1]}: a socket bound to port 0 may take it first; a port outside it is safer`,
    );
}
