/**
 * Idempotency-Key on the platform's writes (docs/RESILIENCE.md): optional, or
 * required for the operations IDEMPOTENCY_REQUIRED names. The key is the
 * sending token's (a gateway token's line, or one browser token): claimed in
 * the tenant's TenantGuard (objects/tenant/idempotency/idempotency-part.ts) before the write goes
 * upstream; the answer is kept, secrets masked, for 24 h. A repeat gets it
 * back with `Idempotent-Replayed: true` and no platform call; the same key
 * in flight is a 409 (40901), with another request a 422 (42200). Reads are
 * untouched: no guard call.
 *
 * @example app.post('/session/create', …, tenantLimits(…), idempotency(op), handler)
 */
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { decodeUtf8 } from '../bytes';
import { ERRORS, GatewayError } from '../errors';
import { sha256Hex } from '../hash';
import { log } from '../log';
import type { StoredAnswer } from '../objects/tenant/idempotency/idempotency-part';
import { guardFor } from '../objects/tenant/tenant-guard';
import { takesIdempotencyKey } from '../operations/table';
import type { HonoEnv } from '../types/context';
import type { PlatformOperation } from '../types/operations';
import { parseEnvelope } from '../upstream/normalize';

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/** 1 to 255 printable ASCII characters (the IETF draft leaves the length to the server). */
const VALID_KEY = /^[\x20-\x7e]{1,255}$/;

/** A claim left by an isolate that died is free again this long after the write's deadline. */
const ABANDONED_AFTER_MS = 60_000;

/** For writes only: proxy.ts gives GET operations no idempotency step. */
export function idempotency(op: Pick<PlatformOperation, 'id' | 'method' | 'upload'>) {
  return createMiddleware<HonoEnv>(async function idempotency(c, next) {
    const settings = c.get('settings');
    const key = c.req.header(IDEMPOTENCY_HEADER);
    // An upload's body streams through unkept: a repeat could not be told from another file.
    if (!takesIdempotencyKey(op)) {
      if (key !== undefined) throw new GatewayError('IDEMPOTENCY_KEY_NOT_TAKEN');
      return next();
    }
    if (key === undefined) {
      if (settings.IDEMPOTENCY_REQUIRED.includes(op.id)) {
        throw new GatewayError('IDEMPOTENCY_KEY_REQUIRED');
      }
      return next();
    }
    if (!VALID_KEY.test(key)) throw new GatewayError('IDEMPOTENCY_KEY_INVALID');

    const fingerprint = await sha256Hex(
      `${op.method}\n${c.req.path}\n${JSON.stringify(c.get('input').body ?? null)}`,
    );
    const keys = guardFor(c.env, c.get('tenant').id).idempotency();
    // Keys are the sending token's (its line's), a browser token's its own: never shared.
    const partition = c.get('partition');
    const owner = { tokenId: c.get('token').id, ...(partition ? { partition } : {}) };
    const claim = await keys
      .claim({
        key,
        ...owner,
        fingerprint,
        now: Date.now(),
        inFlightMs: settings.UPSTREAM_TIMEOUT_MS + ABANDONED_AFTER_MS,
      })
      .catch((err: unknown) => {
        log.error('idempotency.unavailable', {
          request_id: c.get('requestId'),
          error: err instanceof Error ? err.name : typeof err,
        });
        throw new GatewayError('IDEMPOTENCY_UNAVAILABLE', { headers: { 'Retry-After': '1' } });
      });
    c.set('idempotency', claim);
    if (claim.kind === 'in_flight') {
      throw new GatewayError('IDEMPOTENCY_IN_FLIGHT', { headers: { 'Retry-After': '1' } });
    }
    if (claim.kind === 'mismatch') throw new GatewayError('IDEMPOTENCY_KEY_REUSED');
    if (claim.kind === 'replay') return replay(claim.answer);

    await next();
    // What the write's platform call did (forward.ts): a claim is released unless it may have acted.
    const acted = c.get('forwarded')?.acted === true;
    try {
      if (acted) await keys.settle(key, owner, fingerprint, await kept(c), Date.now());
      else await keys.release(key, owner, fingerprint);
    } catch (err) {
      // The claim then lapses after the write's deadline and a minute (ABANDONED_AFTER_MS).
      log.error('idempotency.settle_failed', {
        request_id: c.get('requestId'),
        error: err instanceof Error ? err.name : typeof err,
      });
    }
  });
}

/** The answer as kept: status, body with every platform secret masked, envelope code. */
async function kept(c: Context<HonoEnv>): Promise<StoredAnswer> {
  const answer = c.error ? null : c.get('forwarded')?.keptAnswer();
  if (answer) return answer;
  // An error answer is the gateway's own envelope, with no platform text in it: kept as sent.
  const bytes = new Uint8Array(await c.res.clone().arrayBuffer());
  return {
    status: c.res.status,
    body: decodeUtf8(bytes),
    code: parseEnvelope(bytes)?.code ?? null,
  };
}

/** The kept answer again, without a platform call. */
function replay(answer: StoredAnswer): Response {
  const body =
    answer.body ??
    JSON.stringify({
      code: answer.code ?? ERRORS.INTERNAL.code,
      msg: 'Replayed answer: its body was over 64 KiB, so only its status and code were kept',
      data: null,
    });
  return new Response(body, {
    status: answer.status,
    headers: { 'content-type': 'application/json; charset=utf-8', [REPLAYED_HEADER]: 'true' },
  });
}
