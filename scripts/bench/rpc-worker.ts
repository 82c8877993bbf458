/**
 * The probe Worker of `npm run bench:rpc` (./rpc.ts). A fetch handler makes `n` calls
 * of one kind in a row within one request: to a probe Durable Object whose one small
 * part (a row read from its SQLite) is reached in each of the ways a Durable Object's
 * part can be, and to the gateway's own TenantGuard as its callers reach it.
 */
import { DurableObject, RpcTarget } from 'cloudflare:workers';
import { guardFor, TenantGuard } from '../../src/objects/tenant/tenant-guard';

export { TenantGuard };

interface Env {
  TENANT_GUARD: DurableObjectNamespace<TenantGuard>;
  PROBE: DurableObjectNamespace<Probe>;
}

/** A part: one read of its own row. */
class ProbePart extends RpcTarget {
  constructor(private readonly sql: SqlStorage) {
    super();
  }

  query(limit: number) {
    return this.sql.exec('SELECT n FROM probe LIMIT ?', limit).toArray();
  }
}

export class Probe extends DurableObject<Env> {
  private readonly probePart: ProbePart;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(
      'CREATE TABLE IF NOT EXISTS probe (n INTEGER); INSERT INTO probe VALUES (1)',
    );
    this.probePart = new ProbePart(ctx.storage.sql);
  }

  /** The call as a method of the object itself. */
  direct(limit: number) {
    return this.probePart.query(limit);
  }

  /** The call routed to the part by name: how the TenantGuard takes its callers' calls. */
  call(part: string, call: string, args: [number]) {
    if (part !== 'part' || call !== 'query') throw new TypeError(`no call ${part}.${call}`);
    return this.probePart.query(...args);
  }

  /** The part itself, for calls on its stub (an RpcTarget). */
  part() {
    return this.probePart;
  }
}

const LIMITS = {
  policies: [{ name: 'burst', limit: 1_000_000_000, window_s: 60 }],
  quota: {},
  limiter: 'exact' as const,
};
const exact = () => ({
  now: Date.now(),
  start: Date.now(),
  leaseMaxMs: 0,
  defaults: LIMITS,
  meterOptions: { partitionShare: 1, largestCost: 1 },
  scopes: [{ group: 'teams' as const, tokenId: 'tok_bench', cost: 1, want: 0 }],
  returns: [],
  renewal: false,
});

const probe = (env: Env) => env.PROBE.get(env.PROBE.idFromName('probe'));

/** The kinds of call, each awaited before the next. */
const KINDS: Record<string, (env: Env) => Promise<unknown>> = {
  direct: (env) => probe(env).direct(1),
  routed: (env) => probe(env).call('part', 'query', [1]),
  // Pipelined on the part's stub before it has come back, then let go.
  async pipelined(env) {
    const part = probe(env).part();
    await part.query(1);
    (part as unknown as Disposable)[Symbol.dispose]();
  },
  // On the part's stub once it has come back: two round trips.
  async awaited(env) {
    const part = await probe(env).part();
    await part.query(1);
    part[Symbol.dispose]();
  },
  // The TenantGuard as its callers reach it (guardFor): a read, and an exact-mode lease call.
  'guard-read': (env) => guardFor(env, 'bench').recentRequests().query({ limit: 1 }),
  'guard-acquire': (env) => guardFor(env, 'bench').limits().acquire(exact()),
};

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const kind = KINDS[url.pathname.slice(1)];
    if (!kind) return Response.json(Object.keys(KINDS));
    const n = Number(url.searchParams.get('n') ?? '1');
    for (let i = 0; i < n; i++) await kind(env);
    return new Response('done');
  },
} satisfies ExportedHandler<Env>;
