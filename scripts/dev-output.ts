/**
 * What `npm start` prints of the gateway's own output (wrangler dev and the Worker):
 * by default no line per request (the banner stays in view), with `--requests` one
 * short line per request, with `--verbose` everything as it comes. Warnings, errors and
 * anything else always pass.
 */
import { stripVTControlCharacters } from 'node:util';

export type DevOutput = 'quiet' | 'requests' | 'verbose';

/** wrangler dev's line for each request: `[wrangler:info] GET /team/lists 200 OK (12ms)`. */
const WRANGLER_REQUEST =
  /^\[wrangler:inf(?:o)?\]\s+(GET|HEAD|POST|PUT|PATCH|DELETE|OPTIONS)\s+(\S+)\s+(\d{3})\b[^(]*(?:\((\d+)ms\))?/;

/** The Worker's structured line for a request (src/log.ts, observability/request-log.ts). */
function isRequestLog(line: string): boolean {
  if (!line.startsWith('{')) return false;
  try {
    return (JSON.parse(line) as { event?: unknown }).event === 'request';
  } catch {
    return false;
  }
}

/** The line to print for one line of output, or null to print nothing. */
export function devLine(raw: string, mode: DevOutput, now = new Date()): string | null {
  if (mode === 'verbose') return raw;
  const line = stripVTControlCharacters(raw).trim();
  if (!line) return null;
  const request = WRANGLER_REQUEST.exec(line);
  if (request) {
    if (mode === 'quiet') return null;
    const [, method, path, status, ms] = request;
    const time = now.toISOString().slice(11, 19);
    // The path without its query: a query may carry a value nobody should see twice.
    return `${time} ${method} ${path?.split('?')[0]} ${status}${ms ? ` ${ms} ms` : ''}`;
  }
  if (isRequestLog(line)) return null;
  return raw;
}
