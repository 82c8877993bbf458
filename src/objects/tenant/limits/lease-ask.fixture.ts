/** An isolate's lease request of one scope, as admission makes it, for the guard's unit tests. */
import type { LeaseRequest } from '../../../metering/lease-protocol';
import type { Limits, Scope } from '../../../metering/policy';

/** `cost` units of `scope` at `now` under `limits`, wanting `want` over a 1 s lease; cost 0 renews. */
export function isolateAsk(
  limits: Limits,
  now: number,
  scope: Scope,
  { cost = 1, want = 0 }: { cost?: number; want?: number } = {},
): LeaseRequest {
  return {
    now,
    start: now,
    leaseMaxMs: 1000,
    defaults: limits,
    meterOptions: { partitionShare: 1, largestCost: 1 },
    scopes: [{ ...scope, cost, want }],
    returns: [],
    renewal: cost === 0,
  };
}
