/**
 * Pre-auth throttling: a client IP whose requests keep failing authentication,
 * or keep asking about unknown origins, is refused for a while before any KV
 * read (README, "Limits"). Counting uses Cloudflare's Rate Limiting binding
 * (PREAUTH_LIMITER, per location); once it says no, this isolate remembers
 * the IP for the binding's period, so a flood costs nothing more.
 */
import type { Context } from 'hono';
import type { HonoEnv } from '../env';
import { GatewayError } from '../errors';
import { Memo } from '../tenants/memo';

/** The binding's period (wrangler.toml `simple.period`): how long an IP stays refused here. */
const REFUSED_FOR_S = 60;
/** Most refused IPs one isolate remembers. */
const MAX_REFUSED = 10_000;

export type PreAuthKind = 'auth' | 'origin';

const refused = new Memo<true>(MAX_REFUSED);

/** The client's address as Cloudflare reports it (absent locally). */
export function clientIp(c: Context<HonoEnv>): string {
  return c.req.header('cf-connecting-ip') ?? 'unknown';
}

/** Throws a 429 when this client is being refused for `kind`. */
export function assertNotThrottled(c: Context<HonoEnv>, kind: PreAuthKind): void {
  if (refused.get(`${kind}:${clientIp(c)}`)) throw throttled(kind);
}

/**
 * Counts one failed token check or one origin lookup against the client; when
 * the binding says it is over the limit, the client is refused from now on.
 */
export async function countAgainstClient(c: Context<HonoEnv>, kind: PreAuthKind): Promise<void> {
  const limiter = c.env.PREAUTH_LIMITER;
  if (!limiter) return;
  const key = `${kind}:${clientIp(c)}`;
  const { success } = await limiter.limit({ key });
  if (!success) refused.set(key, true, REFUSED_FOR_S * 1000);
}

const what: Record<PreAuthKind, string> = {
  auth: 'failed token checks',
  origin: 'unknown origins',
};

function throttled(kind: PreAuthKind): GatewayError {
  const policy = kind === 'auth' ? 'failed-auth' : 'origin-lookups';
  return new GatewayError('RATE_LIMITED', {
    message: `Too many ${what[kind]} from this address; retry in ${REFUSED_FOR_S} s`,
    details: { policy, retry_after_s: REFUSED_FOR_S },
    headers: { 'Retry-After': String(REFUSED_FOR_S) },
  });
}
