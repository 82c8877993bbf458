/**
 * An open session event stream ends with its credentials (limits/credentials-watch.ts):
 * closed with 4401 when its token expires, is revoked, or its minting token
 * ends, and with 4403 when its tenant is disabled or deleted (docs/BROWSER.md,
 * "Live session events").
 */
import type { Context } from 'hono';
import { type CredentialsEnd, watchCredentials } from '../limits/credentials-watch';
import type { HonoEnv } from '../types/context';

export const CLOSE_TOKEN_ENDED = 4401;
export const CLOSE_TENANT_ENDED = 4403;

const CLOSES: Record<CredentialsEnd, { code: number; reason: string }> = {
  expired: { code: CLOSE_TOKEN_ENDED, reason: 'token expired' },
  revoked: { code: CLOSE_TOKEN_ENDED, reason: 'token revoked' },
  disabled: { code: CLOSE_TENANT_ENDED, reason: 'tenant disabled' },
};

export function endWithCredentials(c: Context<HonoEnv>, client: WebSocket, upstream: WebSocket) {
  const stop = watchCredentials(c, (why) => {
    const { code, reason } = CLOSES[why];
    closeQuietly(client, code, reason);
    closeQuietly(upstream, code, reason);
  });
  client.addEventListener('close', stop);
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
