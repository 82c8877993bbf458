/**
 * A request that stays open (a session event stream, an upload still
 * streaming) ends with its credentials: when its token expires, is revoked,
 * or its minting token ends, or when its tenant is disabled or deleted.
 * Expiry ends it on time; the rest is checked every LEASE_MAX_MS (1 s by
 * default) from the tenant's lease (admission.ts), or every 5 s from the
 * token and tenant records when limits are off (docs/BROWSER.md, "Live
 * session events"; docs/API.md, "Uploading files").
 */
import type { Context } from 'hono';
import { log } from '../log';
import type { Refusal } from '../metering/lease-protocol';
import { memoizedStores } from '../tenants/stores';
import type { HonoEnv } from '../types/context';
import { isolateAdmission } from './admission';
import { admissionIo, leaseSettings } from './request';

/** How often credentials are checked when there are no leases to check them against. */
export const CHECK_WITHOUT_LIMITS_MS = 5000;

/** Why credentials ended. */
export type CredentialsEnd = 'expired' | 'revoked' | 'disabled';

/**
 * Calls `onEnd` once, when the request's credentials end; returns the
 * function that stops watching (call it when the request is over).
 */
export function watchCredentials(
  c: Context<HonoEnv>,
  onEnd: (why: CredentialsEnd) => void,
): () => void {
  const settings = c.get('settings');
  let stopped = false;
  const end = (why: CredentialsEnd) => {
    if (stopped) return;
    stop();
    onEnd(why);
  };
  const expiresAt = c.get('token').expires_at;
  const expiry = expiresAt
    ? setTimeout(() => end('expired'), Math.max(0, Date.parse(expiresAt) - Date.now()))
    : undefined;
  const every = settings.LIMITS_ENABLED ? settings.LEASE_MAX_MS : CHECK_WITHOUT_LIMITS_MS;
  let checking = false;
  const interval = setInterval(() => {
    if (checking) return;
    checking = true;
    credentialsEnded(c)
      .then((why) => why && end(why))
      .catch((err: unknown) =>
        log.error('stream.check_failed', {
          request_id: c.get('requestId'),
          error: String(err),
        }),
      )
      .finally(() => {
        checking = false;
      });
  }, every);
  function stop() {
    stopped = true;
    clearInterval(interval);
    if (expiry !== undefined) clearTimeout(expiry);
  }
  return stop;
}

/** Why the request must end now, or null while its token and tenant stand. */
async function credentialsEnded(c: Context<HonoEnv>): Promise<CredentialsEnd | null> {
  const settings = c.get('settings');
  const tenant = c.get('tenant');
  const token = c.get('token');
  if (settings.LIMITS_ENABLED) {
    const scope = { group: 'sessions' as const, tokenId: token.id, partition: c.get('partition') };
    const result = await isolateAdmission.standing(
      tenant.id,
      scope,
      leaseSettings(settings),
      admissionIo(c),
    );
    // An unreachable guard ends nothing: the records below still do.
    if (result !== null && 'reason' in result) return endOf(result);
  }
  const stores = await memoizedStores(c.env, settings);
  const stored = await stores.tenants.get(tenant.id);
  if (stored?.status !== 'active') return 'disabled';
  const entry = await stores.tokens.find({ tenantId: tenant.id, tokenId: token.id });
  if (!entry || entry.record.revoked_at) return 'revoked';
  return null;
}

function endOf(r: Refusal): CredentialsEnd {
  if (r.reason === 'disabled') return 'disabled';
  return r.reason === 'expired' ? 'expired' : 'revoked';
}
