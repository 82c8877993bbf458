/**
 * Where `npm start`'s gateway listens, for the CLI in another terminal: npm start writes
 * it to .dev/local-gateway.json while it runs (and removes it when it stops), so
 * `npm run admin` follows `PORT=38787 npm start` without being told.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

const FILE = '.dev/local-gateway.json';
export const DEFAULT_LOCAL_URL = 'http://127.0.0.1:8787';

export function noteLocalGateway(url: string): void {
  mkdirSync('.dev', { recursive: true });
  writeFileSync(FILE, `${JSON.stringify({ url, pid: process.pid })}\n`);
}

export function forgetLocalGateway(): void {
  rmSync(FILE, { force: true });
}

/**
 * The gateway the CLI talks to when --url and GATEWAY_URL are not given: PORT's (as
 * `PORT=… npm run admin` says), else the one npm start noted, else the default; and
 * where that came from, for an error that cannot reach it.
 */
export function localGatewayUrl(env = process.env): { url: string; from: string } {
  if (env.PORT && /^\d{1,5}$/.test(env.PORT)) {
    return { url: `http://127.0.0.1:${env.PORT}`, from: 'PORT' };
  }
  if (existsSync(FILE)) {
    try {
      const { url } = JSON.parse(readFileSync(FILE, 'utf8')) as { url?: unknown };
      if (typeof url === 'string' && /^http:\/\/127\.0\.0\.1:\d{1,5}$/.test(url)) {
        return { url, from: `${FILE}, which npm start wrote` };
      }
    } catch {
      // A file cut short: the default, then.
    }
  }
  return { url: DEFAULT_LOCAL_URL, from: 'the default' };
}
