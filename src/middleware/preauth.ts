/**
 * Pre-auth throttling, for the only lookups a stranger can still make cost a
 * KV read (docs/SECURITY.md, "Threat model"): legacy-format tokens, whose
 * checksum anyone can compute, during their migration window; and origins no
 * tenant is known to allow. Wrong operator tokens are counted too, and every
 * OAuth client registration (anyone may register: docs/OAUTH.md). A tagged
 * token is never throttled: a forged one is refused without I/O, and a valid
 * one, like the right operator token, must never be refused because others
 * failed from the same address.
 *
 * Counting uses Cloudflare's Rate Limiting binding (PREAUTH_LIMITER, per
 * location), per client network: an IPv4 address, or an IPv6 /64, so rotating
 * through one's own IPv6 prefix does not evade it. Once the binding says no,
 * this isolate remembers the network for the binding's period.
 */
import type { Context } from 'hono';
import { humanDuration } from '../duration';
import { GatewayError } from '../errors';
import { Memo } from '../tenants/memo';
import type { HonoEnv } from '../types/context';

/** The binding's period (wrangler.toml `simple.period`): how long a network stays refused here. */
const REFUSED_FOR_S = 60;
/** Most refused networks one isolate remembers. */
const MAX_REFUSED = 10_000;

export type PreAuthKind = 'legacy-token' | 'origin' | 'admin-auth' | 'oauth-register';

/** Refused networks, each with when its refusal ends (ms). */
const refused = new Memo<number>(MAX_REFUSED);

/** The client's address as Cloudflare reports it (absent locally). */
export function clientIp(c: Context<HonoEnv>): string {
  return c.req.header('cf-connecting-ip') ?? 'unknown';
}

/** What one client controls: its IPv4 address, or the /64 its IPv6 address is in. */
export function clientNetwork(ip: string): string {
  if (!ip.includes(':')) return ip;
  const [head = '', tail = ''] = ip.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = ip.includes('::') && tail ? tail.split(':') : [];
  const groups = ip.includes('::')
    ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

const keyOf = (c: Context<HonoEnv>, kind: PreAuthKind) => `${kind}:${clientNetwork(clientIp(c))}`;

/** Whether this client is being refused for `kind`. */
export function isThrottled(c: Context<HonoEnv>, kind: PreAuthKind): boolean {
  return refusedUntil(c, kind) !== null;
}

/** When this isolate stops refusing this client for `kind`, or null when it does not. */
export function refusedUntil(c: Context<HonoEnv>, kind: PreAuthKind): number | null {
  return refused.get(keyOf(c, kind)) ?? null;
}

/** Refuses this client for `kind` in this isolate until `until` (what another isolate saw). */
export function refuseUntil(c: Context<HonoEnv>, kind: PreAuthKind, until: number): void {
  refused.set(keyOf(c, kind), until, until - Date.now());
}

/** Throws a 429 when this client is being refused for `kind`. */
export function assertNotThrottled(c: Context<HonoEnv>, kind: PreAuthKind): void {
  if (isThrottled(c, kind)) throw throttled(kind);
}

/**
 * Counts one failed lookup against the client; when the binding says it is
 * over the limit, the client is refused such lookups from now on, until the
 * time this returns (null while it is not refused).
 */
export async function countAgainstClient(
  c: Context<HonoEnv>,
  kind: PreAuthKind,
): Promise<number | null> {
  const limiter = c.env.PREAUTH_LIMITER;
  if (!limiter) return null;
  const key = keyOf(c, kind);
  const { success } = await limiter.limit({ key });
  if (success) return null;
  const until = Date.now() + REFUSED_FOR_S * 1000;
  refused.set(key, until, REFUSED_FOR_S * 1000);
  return until;
}

const failedLookups: Record<PreAuthKind, { policy: string; attempts: string }> = {
  'legacy-token': { policy: 'failed-auth', attempts: 'unknown legacy-format tokens' },
  origin: { policy: 'origin-lookups', attempts: 'unknown origins' },
  'admin-auth': { policy: 'failed-admin-auth', attempts: 'wrong operator tokens' },
  'oauth-register': { policy: 'oauth-registrations', attempts: 'OAuth client registrations' },
};

/** The 429 for a refused client; `until`: when the refusal ends (default: a whole period). */
export function throttled(kind: PreAuthKind, until?: number): GatewayError {
  const { policy, attempts } = failedLookups[kind];
  const seconds =
    until === undefined ? REFUSED_FOR_S : Math.max(1, Math.ceil((until - Date.now()) / 1000));
  return new GatewayError('RATE_LIMITED', {
    message: `Too many ${attempts} from this address; retry in ${humanDuration(seconds)}`,
    details: { policy, retry_after_s: seconds },
    headers: { 'Retry-After': String(seconds) },
  });
}
