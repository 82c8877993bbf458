/**
 * The only place that talks to the platform: one fetch whose deadline covers
 * the whole answer (headers and every byte of the body), read within the
 * upstream byte limit.
 */
import { GatewayError } from '../errors';
import { readUpstream, type UpstreamResult } from './normalize';
import type { UpstreamRequest } from './request';

export async function callPlatform(
  request: UpstreamRequest,
  timeoutMs: number,
): Promise<UpstreamResult> {
  // One deadline for the headers and every byte of the body: aborting a fetch errors its body too.
  const deadline = AbortSignal.timeout(timeoutMs);
  try {
    const res = await fetch(request.url, { ...request.init, signal: deadline });
    return await readUpstream(res);
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    if (deadline.aborted) {
      throw new GatewayError('UPSTREAM_TIMEOUT', {
        message: `Platform did not answer within ${timeoutMs} ms`,
      });
    }
    throw new GatewayError('UPSTREAM_UNREACHABLE');
  }
}
