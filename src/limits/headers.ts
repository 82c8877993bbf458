/**
 * RateLimit fields of draft-ietf-httpapi-ratelimit-headers-11, as structured
 * field lists: one item per policy, e.g.
 *   RateLimit-Policy: "burst";q=20;w=10, "daily";q=10000;w=86400
 *   RateLimit: "burst";r=7;t=4, "daily";r=9950;t=3600
 */
import type { MeterState } from '../metering/meter-state';

export function rateLimitHeaders(meters: readonly MeterState[]): Record<string, string> {
  if (meters.length === 0) return {};
  return {
    'RateLimit-Policy': meters
      .map((m) => `${sfString(m.name)};q=${m.limit};w=${m.window_s}`)
      .join(', '),
    RateLimit: meters.map((m) => `${sfString(m.name)};r=${m.remaining};t=${m.reset_s}`).join(', '),
  };
}

/** Policy names are validated to [a-z0-9_-], so quoting needs no escapes. */
function sfString(name: string): string {
  return `"${name}"`;
}
