/** A loopback port that nothing listens on right now (the OS picks it). */
import { createServer } from 'node:net';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
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
