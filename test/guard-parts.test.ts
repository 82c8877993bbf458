/**
 * The TenantGuard reached through its parts' handles, in this workerd: a call on a
 * part made without awaiting the part's stub (promise pipelining, one round trip)
 * answers what the same call on the awaited stub answers (two round trips); only
 * what a part's handle names is there to call. `npm run bench:rpc` measures the trips.
 */
import { describe, expect, it } from 'vitest';
import type { RequestRow } from '../src/metering/usage';
import { guardFor } from '../src/objects/tenant/tenant-guard';
import { testEnv } from './helpers';

const guard = () => guardFor(testEnv, `parts-test-${crypto.randomUUID()}`);

function request(at: number, status: number): RequestRow {
  return {
    at,
    request_id: `req-${status}`,
    token_id: 'tok_a',
    operation: 'team.list',
    method: 'GET',
    status,
    code: 0,
    limiter: 'admitted',
    policy: null,
    cache: null,
    upstream_status: status,
    upstream_attempts: 1,
    latency_ms: 3,
    upstream_ms: 2,
    trace_id: null,
  };
}

describe("the TenantGuard's parts, through handles", () => {
  it('answers a pipelined call as it answers one on the awaited stub', async () => {
    const g = guard();
    const now = Date.now();
    await g.record({ rows: [], refusals: [], requests: [request(now, 200), request(now, 503)] });
    const pipelined = await g.recentRequests().query({ limit: 10 });
    const handle = await g.recentRequests();
    const awaited = await handle.query({ limit: 10 });
    expect(pipelined.requests.map((r) => r.status)).toEqual([503, 200]);
    expect(awaited).toEqual(pipelined);
  });
});
