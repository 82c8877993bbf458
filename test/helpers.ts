/**
 * Test helpers: talk to the gateway Worker (inside workerd) and to the
 * platform emulator (a real HTTP server on loopback) that it forwards to.
 */

import {
  createExecutionContext,
  evictDurableObject,
  runInDurableObject,
  waitOnExecutionContext,
} from 'cloudflare:test';
import { env, exports } from 'cloudflare:workers';
import { expect, inject } from 'vitest';
import { ERRORS, type ErrorKind } from '../src/errors';
import worker from '../src/index';
import { guardFor } from '../src/objects/tenant/tenant-guard';
import { keyRing } from '../src/tenants/crypto';
import { generateToken, hashToken, randomBase62, withChecksum } from '../src/tenants/token';
import type { Bindings } from '../src/types/context';

export const testEnv: Bindings = env;
export const platformKeys = inject('platformKeys');
export const ADMIN_TOKEN = testEnv.ADMIN_TOKEN!;
export const UPSTREAM = testEnv.PLATFORM_BASE_URL!;

const BASE = 'https://gateway.test';

/** A request to the deployed-shape Worker, exactly as a client would send it. */
export function gateway(path: string, init: RequestInit = {}): Promise<Response> {
  const self = (exports as unknown as { default: Fetcher }).default;
  return self.fetch(new Request(BASE + path, init));
}

/**
 * The same Worker with some settings changed: for settings and fault tests. It waits
 * for the request's background work (waitUntil) too, so the usage timer is off unless
 * a test turns it on (USAGE_FLUSH_TIMER: it would hold every call USAGE_FLUSH_MS).
 */
export async function gatewayWith(
  overrides: Partial<Bindings>,
  path: string,
  init: RequestInit = {},
): Promise<Response> {
  const ctx = createExecutionContext();
  const env = { ...testEnv, USAGE_FLUSH_TIMER: 'off', ...overrides };
  const res = await worker.fetch(new Request(BASE + path, init), env, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

/**
 * A Durable Object namespace whose objects cannot be reached, as during an outage:
 * every call fails with `message` (a broker's lease call, a TenantGuard's `call`).
 */
export function unreachableObjects(message: string): unknown {
  const lost = () => Promise.reject(new Error(message));
  return {
    idFromName: (name: string) => testEnv.TENANT_GUARD.idFromName(name),
    get: () => ({ acquire: lost, call: lost }),
  };
}

/** A token tagged by the gateway's key but never issued: what a leaked, deleted token looks like. */
export async function unissuedToken(): Promise<string> {
  return (await generateToken(await keyRing(testEnv.KEY_ENCRYPTION_KEY ?? ''))).token;
}

/** A legacy-format token (CRC-32 only, which anyone can compute) that was never issued. */
export function legacyFormatToken(): string {
  return withChecksum(`apgw_${randomBase62(30)}`);
}

export function requestId(label = 'test'): string {
  return `${label}-${crypto.randomUUID()}`;
}

export interface Envelope<T = any> {
  code: number;
  msg: string;
  data: T;
}

export async function envelope<T = any>(res: Response): Promise<Envelope<T>> {
  const text = await res.text();
  try {
    return JSON.parse(text) as Envelope<T>;
  } catch {
    throw new Error(`not JSON (HTTP ${res.status}): ${text.slice(0, 200)}`);
  }
}

/** A header of whole seconds (Age, Retry-After): asserted present and all digits, then read. */
export function secondsHeader(res: Response, name: string): number {
  const value = res.headers.get(name);
  expect(value, `${name} header`).toMatch(/^\d+$/);
  return Number(value);
}

/**
 * Asserts an answer is the gateway's refusal `kind`: its HTTP status and its
 * envelope code together (a 500 or a bare status never passes). Takes a
 * Response (its body is read) or an `asTenant` result; returns the envelope.
 */
export async function expectRefusal(
  answer: Response | { res: Response; body: Envelope },
  kind: ErrorKind,
): Promise<Envelope> {
  const res = answer instanceof Response ? answer : answer.res;
  const body = answer instanceof Response ? await envelope(answer) : answer.body;
  expect({ status: res.status, code: body.code }, kind).toEqual({
    status: ERRORS[kind].status,
    code: ERRORS[kind].code,
  });
  return body;
}

export function admin(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${ADMIN_TOKEN}`);
  if (init.body) headers.set('content-type', 'application/json');
  return gateway(`/admin${path}`, { ...init, headers });
}

export interface TestTenant {
  id: string;
  token: string;
  tokenId: string;
}

/**
 * A new tenant. Its name gets a random ending: the gateway refuses a second tenant
 * with the same name and platform key (409), and tests make many with one key.
 */
export async function createTenant(
  platformKey = platformKeys.demo,
  name = 'test tenant',
  scopes?: string[],
): Promise<TestTenant> {
  const token = scopes ? { token: { name: 'default', scopes } } : {};
  const res = await admin('/tenants', {
    method: 'POST',
    body: JSON.stringify({
      name: `${name} ${randomBase62(6)}`,
      platform_key: platformKey,
      ...token,
    }),
  });
  const body = await envelope(res);
  if (res.status !== 201)
    throw new Error(`tenant creation failed: ${res.status} ${JSON.stringify(body)}`);
  return { id: body.data.tenant_id, token: body.data.token, tokenId: body.data.token_id };
}

/**
 * A tenant with a platform key of its own (a new key of the emulator's demo account), so its
 * cache space and failure state are its own.
 */
export async function tenantWithOwnKey(
  name = 'own key',
): Promise<TestTenant & { platformKey: string }> {
  const res = await fetch(`${UPSTREAM}/user/apikey/new`, {
    method: 'POST',
    headers: { authorization: platformKeys.demo, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `${name}-${crypto.randomUUID().slice(0, 8)}` }),
  });
  const platformKey = ((await res.json()) as { data: { api_key: string } }).data.api_key;
  return { ...(await createTenant(platformKey, name)), platformKey };
}

/** Calls the gateway as a tenant, tagging the call with a fresh request id. */
export async function asTenant(
  tenant: TestTenant,
  path: string,
  init: RequestInit & { json?: unknown } = {},
) {
  const headers = new Headers(init.headers);
  if (!headers.has('authorization') && !headers.has('x-api-key'))
    headers.set('authorization', `Bearer ${tenant.token}`);
  const id = headers.get('x-request-id') ?? requestId();
  headers.set('x-request-id', id);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set('content-type', 'application/json');
    body = JSON.stringify(init.json);
  }
  const res = await gateway(path, { ...init, headers, body });
  return { res, id, body: await envelope(res) };
}

export interface UpstreamRecord {
  seq: number;
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body: string | null;
  /** Multipart bodies: bytes received, and whether the body arrived whole. */
  bytes?: number;
  complete?: boolean;
}

/** What the emulator received for one request id. */
export async function upstreamSaw(id: string): Promise<UpstreamRecord[]> {
  const res = await fetch(`${UPSTREAM}/__emulator/requests?request_id=${encodeURIComponent(id)}`);
  return (await res.json()) as UpstreamRecord[];
}

/**
 * Polls until `check` holds (an event, not a fixed wait); fails after about `ms` of
 * pauses (counted, not read from Date, which a test may have faked).
 */
export async function until(
  check: () => Promise<boolean>,
  what: string,
  ms = 10_000,
): Promise<void> {
  for (let paused = 0; !(await check()); paused += 20) {
    if (paused > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function injectFault(fault: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${UPSTREAM}/__emulator/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(fault),
  });
  if (!res.ok) throw new Error(`fault not accepted: ${res.status} ${await res.text()}`);
}

/**
 * Gives a tenant one fixed window of `limit` units an hour, counted exactly (one guard call a
 * request), so a RateLimit field after one request says that request's cost.
 */
export async function countExactly(tenant: TestTenant, limit = 1000): Promise<void> {
  const res = await admin(`/tenants/${tenant.id}/limits`, {
    method: 'PUT',
    body: JSON.stringify({
      policies: [{ name: 'units', limit, window_s: 3600, algorithm: 'fixed' }],
      quota: {},
      limiter: 'exact',
    }),
  });
  if (res.status !== 200) throw new Error(`limits not set: ${res.status} ${await res.text()}`);
}

/**
 * Revokes a token in its tenant's TenantGuard, then puts its KV record back as it
 * was: what another location sees right after a revocation, before KV's change
 * reaches it. Only the guard knows.
 */
export async function revokeWhileKvLags(tenantId: string, token: string, tokenId: string) {
  const key = `token:${await hashToken(token)}`;
  const before = await testEnv.TENANTS.get(key);
  const ctx = { request_id: 'test', actor: 'test', ip: null, colo: null };
  const outcome = await guardFor(testEnv, tenantId)
    .tokens()
    .revoke(tenantId, tokenId, false, Date.now(), ctx);
  if (outcome.kind !== 'revoked') throw new Error(`not revoked: ${outcome.kind}`);
  if (before) await testEnv.TENANTS.put(key, before);
}

/**
 * Makes a tenant's TenantGuard what it was before it decided tokens (an object
 * from an earlier version): no token rows, nothing adopted, restarted. Its next
 * token call takes in what KV holds, as the upgrade does.
 */
export async function guardFromBeforeTokenRows(tenantId: string): Promise<void> {
  const guard = testEnv.TENANT_GUARD.get(testEnv.TENANT_GUARD.idFromName(tenantId));
  await runInDurableObject(guard, (_, state) => {
    state.storage.sql.exec('DROP TABLE tokens');
    state.storage.sql.exec("DELETE FROM settings WHERE name = 'tokens_adopted'");
  });
  await evictDurableObject(guard);
}
