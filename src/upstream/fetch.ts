/**
 * The only place that talks to the platform: one fetch whose deadline covers
 * the whole answer (headers and every byte of the body), read within the
 * upstream byte limit.
 */
import { GatewayError } from '../errors';
import { readUpstream, type UpstreamResult } from './normalize';

export async function callPlatform(request: Request, timeoutMs: number): Promise<UpstreamResult> {
  const deadline = new AbortController();
  const timer = setTimeout(
    () =>
      deadline.abort(
        new GatewayError('UPSTREAM_TIMEOUT', {
          message: `Platform did not answer within ${timeoutMs} ms`,
        }),
      ),
    timeoutMs,
  );
  try {
    const res = await fetch(request, { signal: deadline.signal });
    return await readUpstream(res, deadline.signal);
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    if (deadline.signal.aborted) throw deadline.signal.reason;
    throw new GatewayError('UPSTREAM_UNREACHABLE');
  } finally {
    clearTimeout(timer);
  }
}
