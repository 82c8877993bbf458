/**
 * The idempotency part alone, on node:sqlite with injected time: a key is claimed
 * once, replayed once settled, refused while in flight or with another request, free
 * again when released or abandoned, its owner's (a token line's, or a browser
 * token's), and gone a day after its answer.
 */
import { describe, expect, it } from 'vitest';
import { memorySql } from '../../../../scripts/sim/sqlite';
import { detachedIo } from '../../../../scripts/sim/tenant-io';
import {
  type ClaimRequest,
  IDEMPOTENCY_MAX_BODY_BYTES,
  IDEMPOTENCY_TTL_MS,
  IdempotencyPart,
} from './idempotency-part';

const T0 = Date.parse('2026-11-24T12:00:00Z');
const IN_FLIGHT_MS = 90_000;
const answer = { status: 200, body: '{"code":0}', code: 0 };

/** The part; `tok_new` is a successor of `tok_old` (one line). */
function part() {
  const lines: Record<string, string> = { tok_new: 'tok_old' };
  const wakes: number[] = [];
  const keys = new IdempotencyPart(
    memorySql(),
    (id) => lines[id] ?? id,
    detachedIo(() => T0, { wakeBy: (at) => wakes.push(at) }),
  );
  return { keys, wakes };
}

const claim = (over: Partial<ClaimRequest> = {}): ClaimRequest => ({
  key: 'k1',
  tokenId: 'tok_old',
  fingerprint: 'f1',
  now: T0,
  inFlightMs: IN_FLIGHT_MS,
  ...over,
});

describe('the idempotency part', () => {
  it('claims a key once, replays it once settled, and refuses another request under it', () => {
    const { keys, wakes } = part();
    expect(keys.claim(claim())).toEqual({ kind: 'claimed' });
    expect(wakes).toHaveLength(1);
    expect(keys.claim(claim({ now: T0 + 1000 }))).toEqual({ kind: 'in_flight' });
    expect(keys.claim(claim({ fingerprint: 'f2' }))).toEqual({ kind: 'mismatch' });
    keys.settle('k1', { tokenId: 'tok_old' }, 'f1', answer, T0 + 2000);
    expect(keys.claim(claim({ now: T0 + 3000 }))).toEqual({ kind: 'replay', answer });
  });

  it("keeps a line's keys across a rotation, and a browser token's apart", () => {
    const { keys } = part();
    keys.claim(claim());
    keys.settle('k1', { tokenId: 'tok_old' }, 'f1', answer, T0);
    expect(keys.claim(claim({ tokenId: 'tok_new' })).kind).toBe('replay');
    expect(keys.claim(claim({ tokenId: 'tok_other' })).kind).toBe('claimed');
    expect(keys.claim(claim({ partition: 'b1' })).kind).toBe('claimed');
  });

  it('frees a key released, or abandoned past the in-flight time', () => {
    const { keys } = part();
    keys.claim(claim());
    keys.release('k1', { tokenId: 'tok_old' }, 'f1');
    expect(keys.claim(claim()).kind).toBe('claimed');
    expect(keys.claim(claim({ now: T0 + IN_FLIGHT_MS }))).toEqual({ kind: 'claimed' });
  });

  it('keeps an answer a day, and a large one as its status and code only', () => {
    const { keys } = part();
    keys.claim(claim());
    const large = { status: 201, body: 'x'.repeat(IDEMPOTENCY_MAX_BODY_BYTES + 1), code: 0 };
    keys.settle('k1', { tokenId: 'tok_old' }, 'f1', large, T0);
    expect(keys.claim(claim({ now: T0 + 1 }))).toEqual({
      kind: 'replay',
      answer: { status: 201, body: null, code: 0 },
    });
    keys.sweep(T0 + IDEMPOTENCY_TTL_MS);
    expect(keys.claim(claim({ now: T0 + IDEMPOTENCY_TTL_MS })).kind).toBe('claimed');
  });
});
