/**
 * How much of a meter's last units the root leases an isolate (the limits part on
 * node:sqlite, injected time): rounded up for an isolate that expects to use
 * them within its lease, so a flood drains a window in a few calls; rounded
 * down for one that does not, so a last unit is not parked where it sits unused.
 */
import { describe, expect, it } from 'vitest';
import { detachedGuard } from '../../../../scripts/sim/tenant-io';
import type { LeaseRequest } from '../../../metering/lease-protocol';
import type { Limits } from '../../../metering/policy';
import { isolateAsk } from './lease-ask.fixture';
import type { LimitsPart } from './limits-part';

const START = Date.parse('2026-11-24T12:00:00Z');
const limits: Limits = { policies: [{ name: 'burst', limit: 20, window_s: 1 }], quota: {} };

const ask = (now: number, cost: number, want: number): LeaseRequest =>
  isolateAsk(limits, now, { group: 'teams', tokenId: 'tok_a' }, { cost, want });

/** A root with `left` units of its 20 left, and a lease call at a slot's start (50 ms of 1 s). */
function rootWith(left: number): LimitsPart {
  const root = detachedGuard(limits).limits;
  for (let i = 0; i < 20 - left; i++) root.acquire(ask(START, 1, 0));
  return root;
}
const rootWithFourLeft = () => rootWith(4);

describe('the limits part: an isolate share of the last units', () => {
  it('rounds up for an isolate that expects requests within its lease', () => {
    // Wants 60 over a 1 s lease: 3 over the 50 ms this one lasts.
    const answer = rootWithFourLeft().acquire(ask(START, 0, 60));
    expect(answer.meters[0]).toMatchObject({ leased: 1, remaining: 3 });
  });

  it('rounds down for one that expects less than a request within it', () => {
    // Wants 20 over a 1 s lease: 1 over 50 ms, twice the half a request it expects.
    const answer = rootWithFourLeft().acquire(ask(START, 0, 20));
    expect(answer.meters[0]).toMatchObject({ leased: 0, remaining: 4 });
  });

  it('leases a busy isolate the very last unit, and nothing once none is left', () => {
    expect(rootWith(1).acquire(ask(START, 0, 60)).meters[0]).toMatchObject({
      leased: 1,
      remaining: 0,
    });
    expect(rootWith(0).acquire(ask(START, 0, 60)).meters[0]).toMatchObject({
      leased: 0,
      remaining: 0,
    });
  });
});
