/**
 * Property-based fuzzing of every route in the table (fast-check): valid
 * requests in many equivalent wire forms, and requests mutated from them
 * (wrong types, out-of-bounds values, bad encodings, unknown and repeated
 * parameters, odd paths and methods, token and content-type variants).
 *
 * Every invalid request must get a documented 4xx envelope carrying its
 * request id, and reach no upstream; every valid one must reach the platform
 * exactly once (fewer on a cache hit) with exactly the validated values; no
 * answer may be a 5xx or contain a platform key, a gateway token or the
 * operator token.
 *
 * `npm test` runs 2 000 cases with a fixed seed; `npm run fuzz` runs 100 000
 * with a random one (FUZZ_RUNS, FUZZ_SEED to change or replay).
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import * as z from 'zod';
import { BUILT_IN_OPERATIONS } from '../src/operations/table';
import { batchArbitrary, type CasePlan, FUZZED_SPECS, MUTATIONS } from './fuzz/arbitraries';
import { MODELS, UNFUZZED } from './fuzz/model';
import { type RunContext, runCase, Tally } from './fuzz/run';
import {
  ADMIN_TOKEN,
  admin,
  createTenant,
  envelope,
  platformKeys,
  testEnv,
  UPSTREAM,
  unissuedToken,
} from './helpers';

const settings = inject('fuzz');
const RUNS = settings.runs > 0 ? settings.runs : 2_000;
const SEED =
  settings.seed ?? (settings.runs > 0 ? Math.floor(Math.random() * 2 ** 31) : 20_261_120);
/** Cases sent at once: the gateway and the emulator each get a handful of overlapping requests. */
const BATCH = 10;

let ctx: RunContext;

beforeAll(async () => {
  // A platform key of its own (same emulator account): no cache entry is shared with other tests.
  const created = await fetch(`${UPSTREAM}/user/apikey/new`, {
    method: 'POST',
    headers: { authorization: platformKeys.demo, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `fuzz-${crypto.randomUUID().slice(0, 8)}` }),
  });
  const platformKey = ((await created.json()) as { data: { api_key: string } }).data.api_key;
  // Every route, API keys included, but platform secrets masked (no apikeys:admin).
  const tenant = await createTenant(platformKey, 'fuzz', ['full', 'apikeys:read', 'apikeys:write']);
  const readOnly = await envelope(
    await admin(`/tenants/${tenant.id}/tokens`, {
      method: 'POST',
      body: JSON.stringify({ name: 'read-only', scopes: ['read-only'] }),
    }),
  );
  const limits = await admin(`/tenants/${tenant.id}/limits`, {
    method: 'PUT',
    body: JSON.stringify({
      policies: [{ name: 'fuzz', limit: 1_000_000_000, window_s: 1 }],
      quota: {},
    }),
  });
  expect(limits.status).toBe(200);
  const values = await fetch(`${UPSTREAM}/user/call/filter_values`, {
    headers: { authorization: platformKey },
  });
  const states = ((await values.json()) as { data: { states: string[] } }).data.states;
  expect(states.length).toBeGreaterThan(0);
  ctx = {
    token: tenant.token,
    readOnlyToken: readOnly.data.token,
    adminToken: ADMIN_TOKEN,
    platformKey,
    unknownToken: await unissuedToken(),
    states,
    secrets: [
      platformKey,
      platformKeys.demo,
      platformKeys.demoSecond,
      platformKeys.other,
      tenant.token,
      readOnly.data.token,
      ADMIN_TOKEN,
      ...(testEnv.KEY_ENCRYPTION_KEY ?? '').split(',').map((k) => k.slice(k.indexOf(':') + 1)),
    ],
    nonce: crypto.randomUUID().slice(0, 8),
  };
});

describe('fuzz model', () => {
  it('covers exactly the routes and fields of the operation table', () => {
    expect(Object.keys(MODELS).sort()).toEqual(FUZZED_SPECS.map((s) => s.id).sort());
    expect([...FUZZED_SPECS.map((s) => s.id), ...UNFUZZED].sort()).toEqual(
      BUILT_IN_OPERATIONS.map((s) => s.id).sort(),
    );
    for (const spec of FUZZED_SPECS) {
      const model = MODELS[spec.id];
      const names = (fields: { name: string }[] | undefined) => (fields ?? []).map((f) => f.name);
      expect(names(model?.params), spec.id).toEqual(
        [...spec.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1]),
      );
      expect(names(model?.query).sort(), spec.id).toEqual(shapeKeys(spec.query));
      expect(names(model?.body).sort(), spec.id).toEqual(shapeKeys(spec.body));
    }
  });
});

/** Field names of a zod object schema, sorted; none without a schema. */
function shapeKeys(schema: unknown): string[] {
  if (schema === undefined) return [];
  // session.create's body is an object, then a default: its input side has the fields.
  const object = schema instanceof z.ZodPipe ? schema.in : schema;
  const shape: unknown = Reflect.get(object as object, 'shape');
  if (typeof shape !== 'object' || shape === null) throw new Error('not an object schema');
  return Object.keys(shape).sort();
}

describe('fuzzing every route', () => {
  it(
    `${RUNS} generated requests (seed ${SEED})`,
    async () => {
      const tally = new Tally();
      const quiet = quietGatewayLogs(tally);
      const started = Date.now();
      const batches = Math.ceil(RUNS / BATCH);
      let progress = 0;
      try {
        const out = await fc.check(
          fc.asyncProperty(batchArbitrary(ctx, BATCH), async (plans) => {
            tally.startBatch();
            // A status check may have found calls.filter_values' entry stale and started its refresh.
            if (plans.some((p) => p.readsStates)) tally.markRefreshing(FILTER_VALUES_KEY);
            await Promise.all(isolateCacheKeys(plans).map((p) => runCase(p, ctx, tally)));
            if (settings.runs > 0 && tally.cases - progress >= 10_000) {
              progress = tally.cases;
              console.log(
                `fuzz: ${tally.cases} cases, ${Math.round((Date.now() - started) / 1000)} s`,
              );
            }
          }),
          { seed: SEED, numRuns: batches, endOnFailure: true },
        );
        // The failing case is described in the error; fast-check's own report would print whole batches.
        if (out.failed) {
          const cause =
            out.errorInstance instanceof Error
              ? out.errorInstance.message
              : String(out.errorInstance);
          throw new Error(`fuzz failed (seed ${SEED}, path ${out.counterexamplePath}): ${cause}`);
        }
      } finally {
        quiet.restore();
        const seconds = ((Date.now() - started) / 1000).toFixed(1);
        console.log(
          `fuzz: ${tally.cases} cases (${tally.valid} valid, ${tally.cases - tally.valid} invalid) in ${seconds} s, seed ${SEED}\n` +
            `  X-Cache: ${JSON.stringify(Object.fromEntries(tally.cacheStatus))}\n` +
            `  upstream answers (HTTP/code) to valid requests: ${JSON.stringify(Object.fromEntries(tally.upstreamCodes))}\n` +
            `  e.g. refused by the platform: ${tally.platformRefused.map((r) => `\n    ${r}`).join('')}`,
        );
      }
      expect(tally.cases).toBeGreaterThanOrEqual(RUNS);
      expect(quiet.unhandled, 'unhandled errors the gateway logged').toEqual([]);
      // Every route was tried both ways, and every mutation was made.
      for (const spec of FUZZED_SPECS) {
        const seen = tally.byRoute.get(spec.id);
        expect(seen?.valid, `${spec.id} valid`).toBeGreaterThan(0);
        expect(seen?.invalid, `${spec.id} invalid`).toBeGreaterThan(0);
      }
      expect([...tally.byMutation.keys()].sort()).toEqual(
        expect.arrayContaining(MUTATIONS.map((m) => m.name).sort()),
      );
    },
    Math.max(60_000, RUNS * 30),
  );
});

/**
 * Cases in one batch overlap: two reads of one cache key would share one
 * upstream call. Later ones bypass the cache instead (calls.list's status check
 * reads calls.filter_values' entry whatever the caller asks, so it claims that key first).
 */
function isolateCacheKeys(plans: CasePlan[]): CasePlan[] {
  const claimed = new Set<string>();
  if (plans.some((p) => p.readsStates)) claimed.add(FILTER_VALUES_KEY);
  return plans.map((plan) => {
    if (plan.expect.kind !== 'valid' || plan.expect.cacheKey === null) return plan;
    if (!claimed.has(plan.expect.cacheKey)) {
      claimed.add(plan.expect.cacheKey);
      return plan;
    }
    return {
      ...plan,
      headers: [
        ...plan.headers.filter(([n]) => n !== 'cache-control'),
        ['cache-control', 'no-store'],
      ],
      expect: { ...plan.expect, cacheKey: null },
    };
  });
}

/**
 * The gateway logs a JSON line per request (every 4xx included): at 100 000
 * cases that is mostly noise. They are counted instead of printed while the
 * fuzzer runs; an `unhandled` error (a gateway bug behind a 500) is kept.
 */
function quietGatewayLogs(tally: Tally) {
  const saved = { log: console.log, warn: console.warn, error: console.error };
  const unhandled: string[] = [];
  const filter =
    (write: (...args: unknown[]) => void) =>
    (...args: unknown[]) => {
      const [line] = args;
      if (typeof line !== 'string' || !line.startsWith('{"level":')) return write(...args);
      tally.logLines++;
      if (line.includes('"event":"unhandled"')) unhandled.push(line);
    };
  console.log = filter(saved.log);
  console.warn = filter(saved.warn);
  console.error = filter(saved.error);
  return {
    unhandled,
    restore() {
      Object.assign(console, saved);
    },
  };
}

const FILTER_VALUES_KEY = 'calls.filter_values|/user/call/filter_values|[]';
