/**
 * "Check key" (docs/OPERATING.md, "Checking a platform key"): one cheap read with a
 * platform key, `calls.filter_values` (a small answer that holds no secret), as the
 * operation table sends it (its credential header, ROUTE_OVERRIDES applied). It goes
 * around the breakers, pauses and key health that guard tenants' calls, so it sees
 * the platform's own answer and leaves no trace on a key's failure state. The
 * outcome never holds the key.
 */
import { GatewayError } from '../errors';
import type { ConfiguredOperation } from '../types/operations';
import type { Settings } from '../types/settings';
import type { KeyCheck } from '../types/wire';
import { callPlatform } from './fetch';
import { buildUpstreamRequest } from './request';

/** The read a check makes. */
export const KEY_CHECK_OPERATION = 'calls.filter_values';
/** A check waits this long at most (or UPSTREAM_TIMEOUT_MS, if lower). */
const KEY_CHECK_TIMEOUT_MS = 5000;

export async function checkPlatformKey(
  settings: Settings,
  operation: ConfiguredOperation,
  platformKey: string,
  requestId: string,
): Promise<KeyCheck> {
  const ms = Math.min(KEY_CHECK_TIMEOUT_MS, settings.UPSTREAM_TIMEOUT_MS);
  const request = buildUpstreamRequest(settings, {
    operation,
    params: {},
    query: {},
    platformKey,
    requestId,
    callerHeaders: new Headers(),
  });
  const started = Date.now();
  const outcome = (result: KeyCheck['result'], status: number | null, code: number | null) => ({
    result,
    status,
    code,
    operation: operation.id,
    ms: Date.now() - started,
  });
  try {
    const answer = await callPlatform(request, { signal: AbortSignal.timeout(ms), ms });
    const code = answer.envelope?.code ?? null;
    return outcome(code === 0 ? 'valid' : 'error', answer.status, code);
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    const status =
      typeof err.details.upstream_status === 'number' ? err.details.upstream_status : null;
    if (err.kind === 'UPSTREAM_AUTH_REJECTED') return outcome('unauthorized', status, null);
    if (err.kind === 'UPSTREAM_UNREACHABLE' || err.kind === 'UPSTREAM_TIMEOUT') {
      return outcome('unreachable', null, null);
    }
    const code = typeof err.details.upstream_code === 'number' ? err.details.upstream_code : null;
    return outcome('error', status, code);
  }
}
