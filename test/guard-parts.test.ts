/**
 * The TenantGuard reached through its parts' handles, in this workerd: a call on a
 * part made without awaiting the part's stub (promise pipelining, one round trip)
 * answers what the same call on the awaited stub answers (two round trips); the
 * part's stub is let go once the call is answered (one kept holds the guard's request
 * open: eviction would wait for it); and a guard that cannot hand out a part fails
 * the call made on it, nothing left unhandled (vitest fails a run with an unhandled
 * rejection). `npm run bench:rpc` measures the trips.
 */
import { evictDurableObject, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { ERRORS } from '../src/errors';
import type { RequestRow } from '../src/metering/usage';
import { guardFor, guardStub, type TenantGuard } from '../src/objects/tenant/tenant-guard';
import {
  asTenant,
  createTenant,
  envelope,
  gatewayWith,
  requestId,
  testEnv,
  upstreamSaw,
} from './helpers';

/** The guard of `tenantId` as it is when a part cannot be had (it throws for every call). */
async function withoutPart(tenantId: string, part: string) {
  await runInDurableObject(guardStub(testEnv, tenantId), (g: TenantGuard) => {
    Object.defineProperty(Reflect.get(g, 'parts'), part, {
      get() {
        throw new Error(`no ${part} now`);
      },
    });
  });
}

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
    const name = `parts-test-${crypto.randomUUID()}`;
    const g = guardStub(testEnv, name);
    const now = Date.now();
    const batch = { rows: [], refusals: [], requests: [request(now, 200), request(now, 503)] };
    await guardFor(testEnv, name).limits().record(batch);
    // One round trip: the call is made on the promise of the part's stub.
    const part = g.recentRequests();
    const pipelined = await part.query({ limit: 10 });
    (part as unknown as Disposable)[Symbol.dispose]();
    // Two: the stub first, then the call.
    const handle = await g.recentRequests();
    const awaited = await handle.query({ limit: 10 });
    handle[Symbol.dispose]();
    expect(pipelined.requests.map((r) => r.status)).toEqual([503, 200]);
    expect(awaited).toEqual(pipelined);
  });

  it("lets a part's stub go once its call is answered: the guard is not held open", async () => {
    const name = `parts-test-${crypto.randomUUID()}`;
    await guardFor(testEnv, name).tenantRecord().setDisabled(true);
    // Eviction waits for the object's requests; a stub kept would hold one open for good.
    await evictDurableObject(guardStub(testEnv, name));
    const answer = await guardFor(testEnv, name)
      .limits()
      .acquire({
        now: Date.now(),
        start: Date.now(),
        leaseMaxMs: 0,
        defaults: { policies: [], quota: {} },
        meterOptions: { partitionShare: 1, largestCost: 1 },
        scopes: [{ group: 'teams', tokenId: 'tok_a', cost: 1, want: 0 }],
        returns: [],
        renewal: false,
      });
    expect(answer.disabled).toBe(true);
  });

  it('fails the call on a part the guard cannot hand out, and leaves nothing unhandled', async () => {
    const t = await createTenant(undefined, 'parts: no keys');
    const teams = await asTenant(t, '/team/lists?team_type=user');
    await withoutPart(t.id, 'idempotency');
    const rejected = await guardFor(testEnv, t.id)
      .idempotency()
      .release('k', { tokenId: t.tokenId }, 'f')
      .then(
        () => null,
        (err: Error) => err.message,
      );
    expect(rejected).toBe('no idempotency now');
    // A write with an Idempotency-Key: refused as the middleware says, nothing forwarded.
    const id = requestId('parts');
    const res = await gatewayWith({}, '/session/create', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${t.token}`,
        'content-type': 'application/json',
        'x-request-id': id,
        'idempotency-key': `key-${crypto.randomUUID()}`,
      },
      body: JSON.stringify({ team_id: teams.body.data.data[0].team_id, task: 'no keys' }),
    });
    expect(res.status).toBe(503);
    expect((await envelope(res)).code).toBe(ERRORS.IDEMPOTENCY_UNAVAILABLE.code);
    expect(await upstreamSaw(id)).toEqual([]);
  });
});
