/**
 * Cloudflare Access identity for operators: verifies the JWT that Access puts
 * in `Cf-Access-Jwt-Assertion` (or its `CF_Authorization` cookie) against the
 * team's published keys, with hono's JWT code (RS256 only; `aud`, `iss`,
 * `exp`, `nbf` checked). The keys are cached per isolate; an unknown `kid`
 * fetches them again, at most once a minute, so a flood of made-up kids is
 * never a flood of fetches (docs/CONSOLE.md, "Access").
 */

import type { HonoJsonWebKey } from 'hono/utils/jwt/jws';
import { decodeHeader, verifyWithJwks } from 'hono/utils/jwt/jwt';
import { GatewayError } from '../errors';
import { log } from '../log';

/** Access signs with RS256; nothing else (and never `none`) is accepted. */
const ALGORITHMS = ['RS256'] as const;
/** Least time between two fetches caused by unknown kids. */
export const JWKS_REFETCH_MIN_MS = 60_000;
/** Keys are fetched again after this long even when every kid is known (a removed key stops working). */
export const JWKS_MAX_AGE_MS = 60 * 60_000;
const JWKS_TIMEOUT_MS = 5000;

interface KeySet {
  keys: HonoJsonWebKey[];
  fetchedAt: number;
}

const keySets = new Map<string, KeySet>();
/** After a failed fetch with no keys to fall back on, no new fetch for this long. */
export const KEYS_RETRY_MS = 10_000;
const failedAt = new Map<string, number>();
const inFlight = new Map<string, Promise<KeySet>>();

/** What a verified Access token says about its holder. */
export interface AccessIdentity {
  email: string;
  groups: string[];
}

export interface AccessConfig {
  /** The team's origin, e.g. https://myteam.cloudflareaccess.com (also the `iss`). */
  teamOrigin: string;
  /** Application Audience (AUD) tags; the token's `aud` must hold one of them. */
  audiences: string[];
}

export function certsUrl(teamOrigin: string): string {
  return `${teamOrigin}/cdn-cgi/access/certs`;
}

/** Verifies an Access JWT; throws ACCESS_TOKEN_INVALID (never saying which check failed to the caller). */
export async function verifyAccessJwt(
  token: string,
  config: AccessConfig,
): Promise<AccessIdentity> {
  let kid: string | undefined;
  try {
    kid = decodeHeader(token).kid;
  } catch {
    throw invalid('malformed');
  }
  const url = certsUrl(config.teamOrigin);
  let set = await keySet(url, false);
  if (kid && !set.keys.some((k) => k.kid === kid)) set = await keySet(url, true);
  let payload: Record<string, unknown>;
  try {
    payload = (await verifyWithJwks(token, {
      keys: set.keys,
      allowedAlgorithms: ALGORITHMS,
      verification: { aud: config.audiences, iss: config.teamOrigin },
    })) as Record<string, unknown>;
  } catch (err) {
    throw invalid(err instanceof Error ? err.name : 'unverified');
  }
  // hono checks exp and nbf only when present; an Access token always has exp.
  if (typeof payload.exp !== 'number') throw invalid('no exp');
  const email = typeof payload.email === 'string' ? payload.email : '';
  // Service tokens carry common_name instead of an email.
  const name = email || (typeof payload.common_name === 'string' ? payload.common_name : '');
  if (!name) throw invalid('no identity');
  return { email: name.toLowerCase(), groups: groupsOf(payload) };
}

/** Group names from the token: `groups`, or `custom.groups` (an IdP claim passed through by Access). */
function groupsOf(payload: Record<string, unknown>): string[] {
  const custom = payload.custom as Record<string, unknown> | undefined;
  const raw = Array.isArray(payload.groups) ? payload.groups : custom?.groups;
  if (!Array.isArray(raw)) return [];
  return raw
    .map((g) => (typeof g === 'string' ? g : (g as { name?: unknown })?.name))
    .filter((g): g is string => typeof g === 'string');
}

function invalid(reason: string): GatewayError {
  log.warn('admin.access_refused', { reason });
  return new GatewayError('ACCESS_TOKEN_INVALID');
}

/**
 * The cached key set; fetched when missing or old, or when `unknownKid` and the
 * last fetch is at least a minute old. Concurrent callers share one fetch.
 */
async function keySet(url: string, unknownKid: boolean): Promise<KeySet> {
  const cached = keySets.get(url);
  const now = Date.now();
  const fresh = cached && now - cached.fetchedAt < JWKS_MAX_AGE_MS;
  // Keys that could not be fetched, and none to fall back on: every request would
  // otherwise wait for its own fetch while the team's endpoint is down.
  const failed = failedAt.get(url);
  if (!cached && failed !== undefined && now - failed < KEYS_RETRY_MS) {
    throw new GatewayError('ACCESS_KEYS_UNAVAILABLE');
  }
  if (cached && fresh && (!unknownKid || now - cached.fetchedAt < JWKS_REFETCH_MIN_MS)) {
    return cached;
  }
  let pending = inFlight.get(url);
  if (!pending) {
    pending = fetchKeys(url, cached).finally(() => inFlight.delete(url));
    inFlight.set(url, pending);
  }
  return pending;
}

async function fetchKeys(url: string, previous: KeySet | undefined): Promise<KeySet> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(JWKS_TIMEOUT_MS) });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    const body = (await res.json()) as { keys?: unknown };
    if (!Array.isArray(body.keys)) throw new Error('no keys array');
    const set = { keys: body.keys as HonoJsonWebKey[], fetchedAt: Date.now() };
    keySets.set(url, set);
    failedAt.delete(url);
    return set;
  } catch (err) {
    log.error('admin.access_keys_unavailable', { url, error: String(err) });
    // A failed refetch keeps the old keys (and waits a minute before trying again).
    if (previous) {
      const kept = { keys: previous.keys, fetchedAt: Date.now() };
      keySets.set(url, kept);
      return kept;
    }
    failedAt.set(url, Date.now());
    throw new GatewayError('ACCESS_KEYS_UNAVAILABLE');
  }
}
