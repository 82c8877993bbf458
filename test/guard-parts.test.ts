/**
 * The TenantGuard reached by its parts (tenant-guard.ts, guardFor), in this workerd:
 * a call of a part is one call of the guard, which routes it to the part by name and
 * answers what the part answers; only the calls a part lists are made (its other
 * methods, which the guard's own parts and alarm use, are refused); the guard holds no
 * request open once a call is answered (eviction would wait for one); and a guard
 * that fails a call fails it where the caller handles it, nothing left unhandled
 * (vitest fails a run with an unhandled rejection). `npm run bench:rpc` measures a
 * call against an RpcTarget per part.
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

describe("the TenantGuard's parts, through guardFor", () => {
  it('routes a call to its part, and answers what the part answers', async () => {
    const name = `parts-test-${crypto.randomUUID()}`;
    const now = Date.now();
    const batch = { rows: [], refusals: [], requests: [request(now, 200), request(now, 503)] };
    await guardFor(testEnv, name).limits().record(batch);
    const page = await guardFor(testEnv, name).recentRequests().query({ limit: 10 });
    expect(page.requests.map((r) => r.status)).toEqual([503, 200]);
    // The same, as the wire carries it: one call of the guard.
    const routed = await guardStub(testEnv, name).call('recentRequests', 'query', [{ limit: 10 }]);
    expect(routed).toEqual(page);
  });

  it('refuses a call its part does not list, and one of no part at all', async () => {
    const stub = guardStub(testEnv, `parts-test-${crypto.randomUUID()}`);
    // The wire's view: any names at all (the guard's own type allows only its parts').
    const call = stub.call as unknown as (
      part: string,
      call: string,
      args: unknown[],
    ) => Promise<unknown>;
    const refused = (part: string, name: string) =>
      call(part, name, []).then(
        () => 'answered',
        (err: Error) => err.message,
      );
    // A part's own business with the other parts (a usage batch, a sweep) is not a call.
    expect(await refused('history', 'take')).toBe('TenantGuard has no call history.take');
    expect(await refused('history', 'sweep')).toBe('TenantGuard has no call history.sweep');
    expect(await refused('settings', 'put')).toBe('TenantGuard has no call settings.put');
    expect(await refused('__proto__', 'toString')).toBe(
      'TenantGuard has no call __proto__.toString',
    );
  });

  it('holds nothing open once a call is answered: the guard can be evicted', async () => {
    const name = `parts-test-${crypto.randomUUID()}`;
    await guardFor(testEnv, name).tenantRecord().setDisabled(true);
    // Eviction waits for the object's requests (a stub of a part kept would hold one open).
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

  it('fails a call the guard cannot make where the caller handles it, nothing unhandled', async () => {
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
