/**
 * An open session event stream ends with its credentials: when its token
 * expires, is revoked, or its minting token ends (close code 4401), or when
 * its tenant is disabled or deleted (4403). It is checked every LEASE_MAX_MS
 * from the tenant's lease (limits/admission.ts), or every 5 s from the token
 * and tenant records when limits are off (docs/BROWSER.md, "Live session events").
 */
import type { Context } from 'hono';
import { isolateAdmission } from '../limits/admission';
import { admissionIo, leaseSettings } from '../limits/request';
import { log } from '../log';
import type { Refusal } from '../metering/lease-protocol';
import { memoizedStores } from '../tenants/stores';
import type { HonoEnv } from '../types/context';

/** How often a stream is checked when there are no leases to check it against. */
export const STREAM_CHECK_WITHOUT_LIMITS_MS = 5000;

export const CLOSE_TOKEN_ENDED = 4401;
export const CLOSE_TENANT_ENDED = 4403;

interface Ended {
  code: number;
  reason: string;
}

export function endWithCredentials(c: Context<HonoEnv>, client: WebSocket, upstream: WebSocket) {
  const settings = c.get('settings');
  const close = ({ code, reason }: Ended) => {
    closeQuietly(client, code, reason);
    closeQuietly(upstream, code, reason);
  };
  const expiresAt = c.get('token').expires_at;
  const timers: ReturnType<typeof setTimeout>[] = [];
  if (expiresAt) {
    const left = Math.max(0, Date.parse(expiresAt) - Date.now());
    timers.push(
      setTimeout(() => close({ code: CLOSE_TOKEN_ENDED, reason: 'token expired' }), left),
    );
  }
  const every = settings.LIMITS_ENABLED ? settings.LEASE_MAX_MS : STREAM_CHECK_WITHOUT_LIMITS_MS;
  let checking = false;
  const interval = setInterval(() => {
    if (checking) return;
    checking = true;
    check(c)
      .then((ended) => ended && close(ended))
      .catch((err: unknown) =>
        log.error('stream.check_failed', { request_id: c.get('requestId'), error: String(err) }),
      )
      .finally(() => {
        checking = false;
      });
  }, every);
  client.addEventListener('close', () => {
    clearInterval(interval);
    for (const t of timers) clearTimeout(t);
  });
}

/** Why the stream must end now, or null while its token and tenant stand. */
async function check(c: Context<HonoEnv>): Promise<Ended | null> {
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
    if (result !== null && 'reason' in result) return ended(result);
  }
  const stores = await memoizedStores(c.env, settings);
  const stored = await stores.tenants.get(tenant.id);
  if (stored?.status !== 'active') return ended({ reason: 'disabled' });
  const entry = await stores.tokens.find({ tenantId: tenant.id, tokenId: token.id });
  if (!entry || entry.record.revoked_at) return ended({ reason: 'revoked' });
  return null;
}

function ended(r: Refusal | { reason: 'disabled' | 'revoked' }): Ended {
  return r.reason === 'disabled'
    ? { code: CLOSE_TENANT_ENDED, reason: 'tenant disabled' }
    : {
        code: CLOSE_TOKEN_ENDED,
        reason: r.reason === 'expired' ? 'token expired' : 'token revoked',
      };
}

export function closeQuietly(ws: WebSocket, code: number, reason: string) {
  // 1005 and 1006 describe a close; they may not be sent in one.
  const sendable = code === 1000 || (code >= 3000 && code <= 4999) ? code : 1011;
  try {
    ws.close(sendable, reason.slice(0, 120));
  } catch {
    // Already closed.
  }
}
