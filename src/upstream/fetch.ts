/**
 * The only place that talks to the platform: one fetch whose deadline covers
 * the whole answer (headers and every byte of the body), read within the
 * upstream byte limit. The deadline is a signal, so a retry
 * (upstream/resilient.ts) runs inside the same one.
 */
import { GatewayError } from '../errors';
import { readUpstream, type UpstreamResult } from './normalize';
import type { UpstreamRequest } from './request';

export interface Deadline {
  signal: AbortSignal;
  /** The whole deadline, for the 504's message. */
  ms: number;
}

/** Failures where the platform sent no byte of an answer: the ones a read may retry. */
const noAnswer = new WeakSet<GatewayError>();
/** Failures that were the caller's (its streamed body refused, or too slow): nothing of the platform. */
const byCaller = new WeakSet<Error>();

export function failedBeforeAnswer(err: unknown): boolean {
  return err instanceof GatewayError && noAnswer.has(err);
}

export function failedByCaller(err: unknown): boolean {
  return err instanceof Error && byCaller.has(err);
}

export async function callPlatform(
  request: UpstreamRequest,
  deadline: Deadline,
): Promise<UpstreamResult> {
  // One deadline for the headers and every byte of the body: aborting a fetch errors its body too.
  const signal = request.signal
    ? AbortSignal.any([deadline.signal, request.signal])
    : deadline.signal;
  let res: Response;
  try {
    res = await fetch(request.url, { ...request.init, signal });
  } catch {
    // A streamed body the gateway refused mid-way cut the call: the caller's refusal, not the platform's.
    throw callerFault(request, deadline) ?? failure(deadline, true);
  }
  const refused = callerFault(request, deadline);
  if (refused) {
    // The platform answered a body it never got whole: the refusal is the answer.
    await res.body?.cancel().catch(() => undefined);
    throw refused;
  }
  try {
    return await readUpstream(res);
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    throw callerFault(request, deadline) ?? failure(deadline, false);
  }
}

/**
 * The caller's part in a failed call: its streamed body refused, or the deadline passed
 * while the gateway was waiting for that body's next bytes (a slow sender is not a slow
 * platform; a platform slow to take the bytes still is).
 */
function callerFault(request: UpstreamRequest, deadline: Deadline): Error | null {
  let err = request.callerFault?.() ?? null;
  if (!err && deadline.signal.aborted && request.awaitingCaller?.()) {
    err = new GatewayError('UPLOAD_TIMEOUT', {
      message: `The upload did not arrive within ${deadline.ms} ms: the gateway was still waiting for its bytes`,
    });
  }
  if (err) byCaller.add(err);
  return err;
}

function failure(deadline: Deadline, beforeAnswer: boolean): GatewayError {
  if (deadline.signal.aborted) {
    return new GatewayError('UPSTREAM_TIMEOUT', {
      message: `Platform did not answer within ${deadline.ms} ms`,
    });
  }
  const err = new GatewayError('UPSTREAM_UNREACHABLE');
  if (beforeAnswer) noAnswer.add(err);
  return err;
}
