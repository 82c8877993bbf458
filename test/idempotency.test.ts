/**
 * Idempotency-Key on the platform's writes (docs/RESILIENCE.md): replays,
 * conflicts, bad keys, the required setting, two identical writes at once,
 * a write whose answer was lost upstream, and secrets in what is kept.
 */
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ERRORS } from '../src/errors';
import { sha256Hex } from '../src/hash';
import {
  admin,
  asTenant,
  createTenant,
  envelope,
  gatewayWith,
  injectFault,
  platformKeys,
  requestId,
  secondsHeader,
  type TestTenant,
  UPSTREAM,
  until,
  upstreamSaw,
} from './helpers';

let tenant: TestTenant;
let teamId: string;
beforeAll(async () => {
  tenant = await createTenant(platformKeys.other, 'idempotent writer');
  const teams = await asTenant(tenant, '/team/lists?team_type=user');
  teamId = teams.body.data.data[0].team_id;
});

async function laneCalls(lane: string): Promise<number> {
  const res = await fetch(`${UPSTREAM}/__emulator/stats`);
  return ((await res.json()) as { requests: Record<string, number> }).requests[lane] ?? 0;
}

function createSession(
  key: string | null,
  o: {
    task?: string;
    settings?: Record<string, string>;
    id?: string;
    as?: TestTenant;
    origin?: string;
  } = {},
) {
  const id = o.id ?? requestId('idem');
  const headers: Record<string, string> = {
    authorization: `Bearer ${(o.as ?? tenant).token}`,
    'content-type': 'application/json',
    'x-request-id': id,
  };
  if (o.origin) headers.origin = o.origin;
  if (key !== null) headers['idempotency-key'] = key;
  return gatewayWith(o.settings ?? {}, '/session/create', {
    method: 'POST',
    headers,
    body: JSON.stringify({ team_id: teamId, task: o.task ?? 'idempotent task' }),
  }).then(async (res) => ({ res, id, body: await envelope(res) }));
}

afterEach(() => vi.useRealTimers());

const freshKey = () => `key-${crypto.randomUUID()}`;

describe('Idempotency-Key', () => {
  it('a repeat gets the first answer back, marked, without a platform call', async () => {
    const key = freshKey();
    const first = await createSession(key);
    expect(first.res.status).toBe(200);
    expect(first.body.code).toBe(0);
    expect(first.res.headers.get('idempotent-replayed')).toBeNull();

    const again = await createSession(key);
    expect(again.res.status).toBe(200);
    expect(again.res.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await upstreamSaw(first.id)).toHaveLength(1);
    expect(await upstreamSaw(again.id)).toHaveLength(0);
  });

  it('the same key with another body: 422, nothing sent', async () => {
    const key = freshKey();
    await createSession(key, { task: 'one' });
    const other = await createSession(key, { task: 'two' });
    expect(other.res.status).toBe(422);
    expect(other.body.code).toBe(ERRORS.IDEMPOTENCY_KEY_REUSED.code);
    expect(other.body.data.request_id).toBe(other.id);
    expect(await upstreamSaw(other.id)).toHaveLength(0);
  });

  it('an invalid key: 400 40004, nothing sent', async () => {
    // Empty, too long, and a tab (not printable; non-ASCII is refused alike).
    for (const key of ['', 'k'.repeat(256), 'tab\there']) {
      const r = await createSession(key);
      expect(r.res.status).toBe(400);
      expect(r.body.code).toBe(ERRORS.IDEMPOTENCY_KEY_INVALID.code);
      expect(await upstreamSaw(r.id)).toHaveLength(0);
    }
    const longest = await createSession(crypto.randomUUID().padEnd(255, 'k'));
    expect(longest.body.code).toBe(0);
  });

  it('IDEMPOTENCY_REQUIRED makes it required on the operations it names', async () => {
    const settings = { IDEMPOTENCY_REQUIRED: 'session.create, apikey.delete' };
    const without = await createSession(null, { settings });
    expect(without.res.status).toBe(400);
    expect(without.body.code).toBe(ERRORS.IDEMPOTENCY_KEY_REQUIRED.code);
    expect(await upstreamSaw(without.id)).toHaveLength(0);
    const withKey = await createSession(freshKey(), { settings });
    expect(withKey.body.code).toBe(0);
    // Other operations stay optional.
    const rename = await gatewayWith(settings, '/team/lists', {
      headers: { authorization: `Bearer ${tenant.token}` },
    });
    expect(rename.status).toBe(200);
    const bad = await createSession(freshKey(), {
      settings: { IDEMPOTENCY_REQUIRED: 'team.list' },
    });
    expect(bad.res.status).toBe(500);
    expect(bad.body.code).toBe(ERRORS.MISCONFIGURED.code);
    expect(bad.body.msg).toContain('IDEMPOTENCY_REQUIRED');
  });

  it('reads are untouched: a GET ignores the header', async () => {
    const r = await asTenant(tenant, '/agent/lists', { headers: { 'idempotency-key': '' } });
    expect(r.res.status).toBe(200);
    expect(r.body.code).toBe(0);
  });

  it('two identical writes at once make one platform call; the other is told it is in flight', async () => {
    const lane = `idem${crypto.randomUUID().slice(0, 8)}`;
    // The platform holds its answer for 2.5 s (within the deadline), and the second write
    // is sent once the platform has the first: it arrives while the first waits.
    const settings = {
      PLATFORM_BASE_URL: `${UPSTREAM}/__lane/${lane}`,
      UPSTREAM_TIMEOUT_MS: '8000',
    };
    await injectFault({ lane, path: '/session/create', kind: 'hang', delay_ms: 2500 });
    const key = freshKey();
    const firstId = requestId('idem-first');
    const first = createSession(key, { settings, id: firstId });
    await until(async () => (await upstreamSaw(firstId)).length > 0, 'the first write upstream');
    const second = await createSession(key, { settings });
    expect(second.res.status).toBe(409);
    expect(second.body.code).toBe(ERRORS.IDEMPOTENCY_IN_FLIGHT.code);
    expect(second.res.headers.get('retry-after')).toBe('1');
    const done = await first;
    expect(done.res.status).toBe(200);
    expect(await laneCalls(lane)).toBe(1);
    // Once the first has finished, the repeat is its answer.
    const later = await createSession(key, { settings });
    expect(later.res.headers.get('idempotent-replayed')).toBe('true');
    expect(later.body).toEqual(done.body);
  });

  it('a write whose answer was lost upstream: the repeat gets the same answer and the platform acts once', async () => {
    const lane = `lost${crypto.randomUUID().slice(0, 8)}`;
    const settings = { PLATFORM_BASE_URL: `${UPSTREAM}/__lane/${lane}` };
    await injectFault({ lane, path: '/session/create', kind: 'lost_answer' });
    const key = freshKey();
    const first = await createSession(key, { settings });
    expect(first.res.status).toBe(502);
    expect(first.body.code).toBe(ERRORS.UPSTREAM_UNREACHABLE.code);
    const again = await createSession(key, { settings });
    expect(again.res.headers.get('idempotent-replayed')).toBe('true');
    expect(again.res.status).toBe(502);
    expect(again.body.code).toBe(first.body.code);
    // The platform received the first once (and acted: a lost answer), the repeat never.
    expect(await upstreamSaw(first.id)).toHaveLength(1);
    expect(await upstreamSaw(again.id)).toHaveLength(0);
    expect(await laneCalls(lane)).toBe(1);
  });

  it('a write the platform never saw (it asked for a pause) frees the key for the retry', async () => {
    const lane = `pause${crypto.randomUUID().slice(0, 8)}`;
    const settings = { PLATFORM_BASE_URL: `${UPSTREAM}/__lane/${lane}` };
    await injectFault({ lane, kind: 'status', status: 503, retry_after: 1 });
    const key = freshKey();
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const paused = await createSession(key, { settings });
    expect(paused.body.code).toBe(ERRORS.UPSTREAM_BACKING_OFF.code);
    // The gateway's clock moves past the pause the platform asked for.
    vi.setSystemTime(Date.now() + secondsHeader(paused.res, 'retry-after') * 1000 + 100);
    const retried = await createSession(key, { settings });
    expect(retried.res.status).toBe(200);
    expect(retried.body.code).toBe(0);
    expect(retried.res.headers.get('idempotent-replayed')).toBeNull();
  });

  it('keeps no secret: a replay of a new API key shows it masked, even to a token that saw it', async () => {
    const keeper = await createTenant(platformKeys.other, 'key admin', ['apikeys:admin']);
    const key = freshKey();
    const call = () =>
      asTenant(keeper, '/user/apikey/new', {
        method: 'POST',
        headers: { 'idempotency-key': key },
        json: { name: 'idempotent-key' },
      });
    const first = await call();
    expect(first.body.code).toBe(0);
    const secret: string = first.body.data.api_key;
    expect(secret).toMatch(/^sk-/);
    const again = await call();
    expect(again.res.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data.id).toBe(first.body.data.id);
    expect(again.body.data.api_key).not.toBe(secret);
    expect(JSON.stringify(again.body)).not.toContain(secret);
    expect(JSON.stringify(again.body)).not.toContain(platformKeys.other);
    await asTenant(keeper, `/user/apikey/delete/${first.body.data.id}`, { method: 'DELETE' });
  });

  it('a replay is the answer the caller got, its secrets masked once, not masked again', async () => {
    // The emulator's seeded report of this tenant's account (emulator/dashboard-seed.ts).
    const reportId = `rep_${(await sha256Hex('other:report:1')).slice(0, 20)}`;
    const key = freshKey();
    // A report's lists are any JSON, and come back in the answer: a secret-named field in them is masked.
    const call = () =>
      asTenant(tenant, `/dashboard/report/update/${reportId}`, {
        method: 'POST',
        headers: { 'idempotency-key': key },
        json: { user_personas: [{ name: 'buyer', client_secret: 'cs-0123456789abcdef' }] },
      });
    const first = await call();
    expect(first.body.code).toBe(0);
    expect(first.body.data.user_personas).toEqual([{ name: 'buyer', client_secret: 'cs-…cdef' }]);
    const again = await call();
    expect(again.res.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
  });
});

describe('Idempotency-Key owners', () => {
  const APP = 'https://app.example';

  async function issued(scopes: string[]): Promise<TestTenant> {
    const res = await admin(`/tenants/${tenant.id}/tokens`, {
      method: 'POST',
      body: JSON.stringify({ name: 'second', scopes }),
    });
    const body = await envelope(res);
    return { id: tenant.id, token: body.data.token, tokenId: body.data.id };
  }

  it("is the sending token's: the same key from another server token is another key", async () => {
    const key = freshKey();
    const other = await issued(['full']);
    const first = await createSession(key);
    const second = await createSession(key, { as: other });
    expect(second.res.headers.get('idempotent-replayed')).toBeNull();
    expect(second.body.data.session_id).not.toBe(first.body.data.session_id);
    expect(await upstreamSaw(second.id)).toHaveLength(1);
    // Each token's own repeat still replays its own answer.
    const again = await createSession(key, { as: other });
    expect(again.res.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data.session_id).toBe(second.body.data.session_id);
  });

  it("keeps a browser token's keys apart from its minting token's, both ways", async () => {
    await admin(`/tenants/${tenant.id}`, {
      method: 'PATCH',
      body: JSON.stringify({ cors_origins: [APP] }),
    });
    const minted = await envelope(
      await gatewayWith({}, '/auth/browser-token', {
        method: 'POST',
        headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ origin: APP, ttl_s: 600 }),
      }),
    );
    const browser = { ...tenant, token: minted.data.token as string };
    const serverFirst = freshKey();
    const server = await createSession(serverFirst);
    const fromBrowser = await createSession(serverFirst, { as: browser, origin: APP });
    expect(fromBrowser.res.status).toBe(200);
    expect(fromBrowser.res.headers.get('idempotent-replayed')).toBeNull();
    expect(fromBrowser.body.data.session_id).not.toBe(server.body.data.session_id);

    const browserFirst = freshKey();
    const b = await createSession(browserFirst, { as: browser, origin: APP });
    const s2 = await createSession(browserFirst);
    expect(s2.res.headers.get('idempotent-replayed')).toBeNull();
    expect(s2.body.data.session_id).not.toBe(b.body.data.session_id);
  });

  it('follows a token through rotation: its successor replays what it sent', async () => {
    const own = await issued(['full']);
    const key = freshKey();
    const first = await createSession(key, { as: own });
    const rotated = await envelope(
      await admin(`/tenants/${tenant.id}/tokens/${own.tokenId}/rotate`, {
        method: 'POST',
        body: JSON.stringify({ overlap_s: 60 }),
      }),
    );
    const successor = { ...own, token: rotated.data.token as string };
    const again = await createSession(key, { as: successor });
    expect(again.res.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
  });
});
