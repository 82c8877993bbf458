/** The only place that talks to the platform: one fetch and read under one deadline. */
import { GatewayError } from '../errors';
import { readUpstream, type UpstreamResult } from './normalize';

export async function callPlatform(request: Request, timeoutMs: number): Promise<UpstreamResult> {
  try {
    const res = await fetch(request, { signal: AbortSignal.timeout(timeoutMs) });
    return await readUpstream(res);
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) {
      throw new GatewayError('UPSTREAM_TIMEOUT', `Platform did not answer within ${timeoutMs} ms`);
    }
    throw new GatewayError('UPSTREAM_UNREACHABLE');
  }
}
