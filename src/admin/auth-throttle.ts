/**
 * The operator-token throttle (docs/SECURITY.md, "Operator authentication").
 * Wrong ADMIN_TOKENs are counted per client network (middleware/preauth.ts);
 * once a network is over the limit, **every** operator-token attempt from it,
 * the right token too, gets the same 429 until the window passes, so the
 * answers never tell a guesser which guess was right.
 *
 * The Rate Limiting binding counts per Cloudflare location, and any isolate of
 * the location may take the next attempt: the refusal is kept in this
 * isolate's memory and in the location's cache (the Cache API, per data
 * center), so every isolate there refuses from the first. Each episode goes to
 * the audit log once (AuditLog.recordEpisode), and to the log stream once per
 * isolate.
 */
import type { Context } from 'hono';
import { log } from '../log';
import {
  clientIp,
  clientNetwork,
  countAgainstClient,
  refusedUntil,
  refuseUntil,
  throttled,
} from '../middleware/preauth';
import { auditLog } from '../objects/audit/audit-log';
import type { HonoEnv } from '../types/context';

const KIND = 'admin-auth';
/** Where the location's cache keeps a refusal: a name, never fetched. */
const MARKER_ORIGIN = 'https://admin-auth-throttle.gateway.invalid';

const markerUrl = (network: string) => `${MARKER_ORIGIN}/${encodeURIComponent(network)}`;

/** Throws the 429 when this client's network is refused operator-token attempts now. */
export async function refuseWhileThrottled(c: Context<HonoEnv>): Promise<void> {
  const local = refusedUntil(c, KIND);
  if (local !== null) throw throttled(KIND, local);
  const until = await sharedRefusal(clientNetwork(clientIp(c)));
  if (until === null) return;
  refuseUntil(c, KIND, until);
  throw throttled(KIND, until);
}

/**
 * Counts a wrong operator token. When that throttles the network, the episode begins:
 * shared with the location's other isolates, audited once, and answered with the 429.
 */
export async function countWrongToken(c: Context<HonoEnv>): Promise<void> {
  const until = await countAgainstClient(c, KIND);
  if (until === null) return;
  const network = clientNetwork(clientIp(c));
  log.warn('admin.auth_throttled', { request_id: c.get('requestId'), ip: clientIp(c) });
  await Promise.all([shareRefusal(network, until), auditEpisode(c, network, until)]);
  throw throttled(KIND, until);
}

async function sharedRefusal(network: string): Promise<number | null> {
  try {
    const hit = await caches.default.match(markerUrl(network));
    const until = hit ? Number(await hit.text()) : Number.NaN;
    return until > Date.now() ? until : null;
  } catch {
    return null;
  }
}

async function shareRefusal(network: string, until: number): Promise<void> {
  const seconds = Math.max(1, Math.ceil((until - Date.now()) / 1000));
  try {
    await caches.default.put(
      markerUrl(network),
      new Response(String(until), { headers: { 'Cache-Control': `max-age=${seconds}` } }),
    );
  } catch {
    // Without the Cache API (*.workers.dev), each isolate refuses from its own first count.
  }
}

async function auditEpisode(c: Context<HonoEnv>, network: string, until: number): Promise<void> {
  const cf = c.req.raw.cf as { colo?: unknown } | undefined;
  await auditLog(c.env).recordEpisode(`${KIND}:${network}`, Date.now(), until, {
    action: 'admin.auth_throttled',
    tenant_id: null,
    token_id: null,
    request_id: c.get('requestId'),
    actor: 'unknown',
    ip: c.req.header('cf-connecting-ip') ?? null,
    colo: typeof cf?.colo === 'string' ? cf.colo : null,
    detail: { network, until: new Date(until).toISOString(), policy: 'failed-admin-auth' },
  });
}
