/**
 * Runs generated cases against the gateway (inside workerd) and checks each
 * answer and what the platform emulator received under its request id.
 */
import { expect } from 'vitest';
import errorsDoc from '../../docs/ERRORS.md?raw';
import { ERRORS } from '../../src/errors';
import { BUILT_IN_OPERATIONS } from '../../src/operations/table';
import { gateway, injectFault, type UpstreamRecord, upstreamSaw } from '../helpers';
import type { CasePlan, FuzzContext } from './arbitraries';

/** Codes the ERRORS catalogue and docs/ERRORS.md both name. */
const CATALOGUE = new Set<number>(Object.values(ERRORS).map((e) => e.code));
const DOCUMENTED = new Set<number>(
  [...errorsDoc.matchAll(/^\| (\d{5}) \|/gm)].map((m) => Number(m[1])),
);

const SPECS = new Map(BUILT_IN_OPERATIONS.map((s) => [s.id, s]));
const FILTER_VALUES = '/user/call/filter_values';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface RunContext extends FuzzContext {
  /** Strings no response may contain. */
  secrets: string[];
  /** Tells this process's request ids apart from any other run's. */
  nonce: string;
}

/** Per run: totals, and cache keys a STALE answer is refreshing in the background. */
export class Tally {
  cases = 0;
  valid = 0;
  logLines = 0;
  readonly byRoute = new Map<string, { valid: number; invalid: number }>();
  readonly byMutation = new Map<string, number>();
  readonly cacheStatus = new Map<string, number>();
  readonly upstreamCodes = new Map<string, number>();
  /** A few valid requests the platform itself refused (its 4xx), for the summary. */
  readonly platformRefused: string[] = [];
  /** Keys whose background refresh may still run: marked in this batch or the one before. */
  private refreshing = new Set<string>();
  private refreshedBefore = new Set<string>();

  startBatch(): void {
    this.refreshedBefore = this.refreshing;
    this.refreshing = new Set();
  }

  markRefreshing(key: string): void {
    this.refreshing.add(key);
  }

  mayBeRefreshing(key: string): boolean {
    return this.refreshing.has(key) || this.refreshedBefore.has(key);
  }

  count(plan: CasePlan): void {
    this.cases++;
    const kind = plan.expect.kind;
    if (kind === 'valid') this.valid++;
    const r = this.byRoute.get(plan.route) ?? { valid: 0, invalid: 0 };
    r[kind]++;
    this.byRoute.set(plan.route, r);
    for (const m of plan.mutations) this.byMutation.set(m, (this.byMutation.get(m) ?? 0) + 1);
  }
}

let serial = 0;

function requestIdFor(plan: CasePlan, nonce: string): string {
  const base = `fz-${nonce}-${++serial}`;
  switch (plan.requestId) {
    case 'plain':
      return base;
    case 'symbols':
      return `${base}_=-x=`;
    case 'longest':
      return base.padEnd(128, '=');
    case 'too-long':
      return base.padEnd(129, 'x');
    case 'bad-char':
      return `${base}.x`;
    case 'empty':
      return '';
  }
}

const accepted = (plan: CasePlan) => ['plain', 'symbols', 'longest'].includes(plan.requestId);

export function describePlan(plan: CasePlan): string {
  const body = plan.body === undefined ? '' : ` body=${JSON.stringify(plan.body.slice(0, 300))}`;
  const headers = plan.headers.map(([k, v]) => `${k}: ${v.slice(0, 60)}`).join(' | ');
  return `[${plan.route}] ${plan.method} ${plan.path}?${plan.query.slice(0, 400)} {${headers}}${body} mutations=${JSON.stringify(plan.mutations)} request_id=${plan.requestId}`;
}

/** Sends one case and checks everything about it; throws with the case described. */
export async function runCase(plan: CasePlan, ctx: RunContext, tally: Tally): Promise<void> {
  const sentId = requestIdFor(plan, ctx.nonce);
  const headers = new Headers();
  for (const [name, value] of plan.headers) headers.append(name, value);
  headers.set('x-request-id', sentId);
  // Each case from its own address: the pre-auth throttle counts failures per client IP.
  headers.set(
    'cf-connecting-ip',
    `10.${(serial >> 16) & 255}.${(serial >> 8) & 255}.${serial & 255}`,
  );
  if (plan.expect.kind === 'valid' && plan.method !== 'GET') {
    // Writes reach the emulator (and are recorded) but change nothing shared with other tests.
    await injectFault({ request_id: sentId, kind: 'platform_error' });
  }
  const res = await gateway(`${plan.path}${plan.query === '' ? '' : `?${plan.query}`}`, {
    method: plan.method,
    headers,
    body: plan.body,
  });
  const text = await res.text();
  const id = res.headers.get('x-request-id') ?? '';
  try {
    await checkCase(plan, ctx, tally, res, text, id, sentId);
    tally.count(plan);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new Error(
      `${message}\n  case: ${describePlan(plan)}\n  answer: HTTP ${res.status} ${text.slice(0, 400)}`,
    );
  }
}

function fail(message: string): never {
  throw new Error(message);
}

async function checkCase(
  plan: CasePlan,
  ctx: RunContext,
  tally: Tally,
  res: Response,
  text: string,
  id: string,
  sentId: string,
): Promise<void> {
  if (res.status >= 500) fail(`HTTP ${res.status}: no generated request may get a 5xx`);
  if (accepted(plan) ? id !== sentId : !UUID.test(id)) {
    fail(`X-Request-ID ${id} for a ${plan.requestId} request id ${sentId}`);
  }
  for (const secret of ctx.secrets) {
    if (text.includes(secret)) fail('a secret appears in the response body');
    res.headers.forEach((value, name) => {
      if (value.includes(secret)) fail(`a secret appears in the response header ${name}`);
    });
  }
  if (!/^application\/json\b/.test(res.headers.get('content-type') ?? '')) {
    fail(`content-type ${res.headers.get('content-type')}`);
  }
  let envelope: { code: unknown; msg: unknown; data: unknown };
  try {
    envelope = JSON.parse(text);
  } catch {
    fail('the body is not JSON');
  }
  if (typeof envelope !== 'object' || envelope === null || !('data' in envelope)) {
    fail('the body is not a {code, msg, data} envelope');
  }
  if (typeof envelope.code !== 'number' || typeof envelope.msg !== 'string') {
    fail('the envelope has no numeric code and string msg');
  }
  const seen = await upstreamSaw(id);
  const spec = SPECS.get(plan.route);
  if (!spec) fail(`unknown route ${plan.route}`);

  if (plan.expect.kind === 'invalid') {
    const code = envelope.code;
    if (res.status < 400 || res.status >= 500) fail(`HTTP ${res.status} for an invalid request`);
    if (!CATALOGUE.has(code) || !DOCUMENTED.has(code)) fail(`code ${code} is not documented`);
    if (!plan.expect.codes.includes(code)) {
      fail(`code ${code}, expected one of ${plan.expect.codes.join(', ')}`);
    }
    if (Math.floor(code / 100) !== res.status) fail(`code ${code} with HTTP ${res.status}`);
    const data = envelope.data as { request_id?: unknown } | null;
    if (data?.request_id !== id) fail(`data.request_id ${data?.request_id} is not ${id}`);
    // calls.list's status check reads calls.filter_values through the cache: that one read, and nothing else.
    const allowed = seen.filter(
      (r) => plan.readsStates && r.method === 'GET' && r.path === FILTER_VALUES,
    );
    if (seen.length !== allowed.length || allowed.length > 1) {
      fail(`an invalid request reached the platform: ${JSON.stringify(seen.map(brief))}`);
    }
    return;
  }

  // Valid: the platform's answer, never one of the gateway's own errors.
  if (CATALOGUE.has(envelope.code)) {
    fail(`gateway error ${envelope.code} for a valid request`);
  }
  const upstreamCode = `${res.status}/${envelope.code}`;
  tally.upstreamCodes.set(upstreamCode, (tally.upstreamCodes.get(upstreamCode) ?? 0) + 1);
  if (res.status >= 400 && tally.platformRefused.length < 8) {
    tally.platformRefused.push(
      `${plan.route} ${JSON.stringify(plan.expect.forwarded.query)} → ${text.slice(0, 120)}`,
    );
  }
  const expected = plan.expect.forwarded;
  const own = seen.filter((r) => r.method === spec.method && samePath(r.path, expected.path));
  const other = seen.filter((r) => !own.includes(r));
  const statesReads = other.filter(
    (r) => plan.readsStates && r.method === 'GET' && r.path === FILTER_VALUES,
  );
  if (other.length !== statesReads.length || statesReads.length > 1) {
    fail(`unexpected upstream calls: ${JSON.stringify(other.map(brief))}`);
  }

  let calls: [number, number] = [1, 1];
  if (spec.cache) {
    const xCache = res.headers.get('x-cache') ?? 'none';
    tally.cacheStatus.set(xCache, (tally.cacheStatus.get(xCache) ?? 0) + 1);
    const key = plan.expect.cacheKey;
    if (key === null) {
      if (xCache !== 'BYPASS') fail(`X-Cache ${xCache} with Cache-Control: no-store`);
    } else if (xCache === 'HIT') {
      calls = [0, 0];
    } else if (xCache === 'STALE') {
      // Served at once; one refresh runs behind it, under this request's id.
      calls = [0, 1];
      tally.markRefreshing(key);
    } else if (xCache === 'MISS') {
      // A refresh a STALE answer started may still be running: this read may have joined it.
      if (tally.mayBeRefreshing(key)) calls = [0, 1];
    } else {
      fail(`X-Cache ${xCache} on a cacheable read`);
    }
    if (res.headers.get('age') === null) fail('no Age header on a cacheable read');
  }
  if (own.length < calls[0] || own.length > calls[1]) {
    fail(
      `the platform saw ${own.length} calls, expected ${calls.join('..')}: ${JSON.stringify(seen.map(brief))}`,
    );
  }
  for (const record of own) checkForwarded(plan, ctx, record, id);
}

function samePath(recorded: string, expected: string): boolean {
  try {
    return decodeURIComponent(recorded) === expected;
  } catch {
    return false;
  }
}

const brief = (r: UpstreamRecord) => ({ method: r.method, path: r.path, query: r.query });

function checkForwarded(plan: CasePlan, ctx: RunContext, r: UpstreamRecord, id: string): void {
  if (plan.expect.kind !== 'valid') return;
  const spec = SPECS.get(plan.route);
  if (!spec) fail(`unknown route ${plan.route}`);
  const want = plan.expect.forwarded;
  expect(r.query, 'query as forwarded').toEqual(want.query);
  if (want.body === null) {
    if (r.body !== null) fail(`a body was forwarded: ${r.body.slice(0, 200)}`);
  } else {
    expect(JSON.parse(r.body ?? 'null'), 'body as forwarded').toEqual(want.body);
  }
  const credential = spec.credential;
  const otherHeader = credential === 'authorization' ? 'x-api-key' : 'authorization';
  if (r.headers[credential] !== ctx.platformKey)
    fail(`${credential} upstream is not the platform key`);
  if (r.headers[otherHeader] !== undefined) fail(`${otherHeader} was forwarded`);
  if (r.headers.cookie !== undefined) fail('the cookie was forwarded');
  if (r.headers['x-request-id'] !== id) fail(`x-request-id upstream ${r.headers['x-request-id']}`);
  for (const name of ['user-agent', 'accept-language']) {
    const sent = plan.headers.find(([n]) => n === name)?.[1];
    if (sent !== undefined && r.headers[name] !== sent) fail(`${name} not forwarded as sent`);
  }
  for (const [name, value] of Object.entries(r.headers)) {
    if (
      value.includes(ctx.token) ||
      value.includes(ctx.readOnlyToken) ||
      value.includes(ctx.adminToken)
    ) {
      fail(`a gateway token went upstream in ${name}`);
    }
  }
}
