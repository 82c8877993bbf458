/**
 * What an adversarial review found, one test per finding: platform keys out of
 * tenants' reach, body limits everywhere, streams that end with their
 * credentials, cache versions per platform key, pre-auth throttling, and the
 * lower findings. Upstream byte limits are in upstream-limits.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ERRORS } from '../src/errors';
import { signBrowserToken } from '../src/tenants/browser-token';
import { keyRing } from '../src/tenants/crypto';
import { tenantTokenKey, tokenKey } from '../src/tenants/kv-keys';
import { hashToken, randomBase62 } from '../src/tenants/token';
import {
  admin,
  asTenant,
  createTenant,
  envelope,
  expectRefusal,
  gateway,
  gatewayWith,
  guardFromBeforeTokenRows,
  injectFault,
  legacyFormatToken,
  platformKeys,
  requestId,
  type TestTenant,
  testEnv,
  UPSTREAM,
  unissuedToken,
  upstreamSaw,
} from './helpers';

const APP = 'https://app.example';

async function withOrigin(t: TestTenant): Promise<TestTenant> {
  const res = await admin(`/tenants/${t.id}`, {
    method: 'PATCH',
    body: JSON.stringify({ cors_origins: [APP] }),
  });
  expect(res.status).toBe(200);
  return t;
}

async function issue(t: TestTenant, spec: Record<string, unknown>): Promise<TestTenant> {
  const res = await admin(`/tenants/${t.id}/tokens`, {
    method: 'POST',
    body: JSON.stringify(spec),
  });
  const body = await envelope(res);
  expect(res.status, JSON.stringify(body)).toBe(201);
  return { ...t, token: body.data.token, tokenId: body.data.id };
}

describe('platform keys stay with the platform', () => {
  it('a default token can neither list nor delete the platform’s API keys', async () => {
    const t = await createTenant();
    const id = requestId('keys');
    const list = await asTenant(t, '/user/apikey/lists', { headers: { 'x-request-id': id } });
    expect(list.res.status).toBe(403);
    expect(list.body.code).toBe(ERRORS.SCOPE_REQUIRED.code);
    expect(list.body.data.scope).toBe('apikeys:read');
    const del = await asTenant(t, '/user/apikey/delete/1', { method: 'DELETE' });
    await expectRefusal(del, 'SCOPE_REQUIRED');
    expect(await upstreamSaw(id)).toEqual([]);
  });

  it('no preset grants an API key scope; full and read-only stay clear of them', async () => {
    const t = await createTenant();
    // A grant keeps a preset by name (its scopes are not listed): what it allows is what a
    // request with it gets.
    for (const preset of ['full', 'read-only']) {
      const holder = await issue(t, { name: preset, scopes: [preset] });
      const id = requestId('preset-keys');
      const list = await asTenant(holder, '/user/apikey/lists', {
        headers: { 'x-request-id': id },
      });
      expect(list.res.status, preset).toBe(403);
      expect(list.body.data.scope, preset).toBe('apikeys:read');
      expect(await upstreamSaw(id)).toEqual([]);
    }
    // With the scope granted by name the same request is answered: the refusals were the presets'.
    const named = await issue(t, { name: 'keys', scopes: ['full', 'apikeys:read'] });
    expect((await asTenant(named, '/user/apikey/lists')).res.status).toBe(200);
  });

  it('an explicit apikeys:read grant sees keys masked; only apikeys:admin sees them whole', async () => {
    const t = await createTenant();
    const reader = await issue(t, { name: 'reader', scopes: ['apikeys:read'] });
    const keeper = await issue(t, { name: 'keeper', scopes: ['apikeys:admin'] });
    const masked = JSON.stringify((await asTenant(reader, '/user/apikey/lists')).body);
    expect(masked).not.toContain(platformKeys.demo);
    expect(masked).toContain(`sk-…${platformKeys.demo.slice(-4)}`);
    expect(JSON.stringify((await asTenant(keeper, '/user/apikey/lists')).body)).toContain(
      platformKeys.demo,
    );
  });

  it('masks a platform key wherever it shows up, in any answer', async () => {
    const t = await createTenant();
    const team = (await asTenant(t, '/team/lists')).body.data.data[0].team_id;
    // A title that is the tenant's own platform key comes back in the session it names.
    const created = await asTenant(t, '/session/create', {
      method: 'POST',
      json: { team_id: team, title: platformKeys.demo },
    });
    const info = await asTenant(t, `/session/info/${created.body.data.session_id}`);
    expect(info.res.status).toBe(200);
    expect(JSON.stringify(info.body)).not.toContain(platformKeys.demo);
    expect(info.body.data.name).toBe(`sk-…${platformKeys.demo.slice(-4)}`);
  });
});

describe('request bodies are bounded everywhere', () => {
  const big = JSON.stringify({ origin: APP, pad: 'x'.repeat(70 * 1024) });

  it('minting refuses an oversized body from its Content-Length, after counting the request', async () => {
    const t = await withOrigin(await createTenant());
    const res = await gateway('/auth/browser-token', {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
      body: big,
    });
    expect(res.status).toBe(413);
    expect((await envelope(res)).code).toBe(ERRORS.PAYLOAD_TOO_LARGE.code);
    const usage = await envelope(await admin(`/tenants/${t.id}/usage`));
    // Counted although refused: floods of bad bodies spend the tenant's own limits.
    expect(usage.data.meters[0].used).toBeGreaterThan(0);
  });

  it('refuses an oversized body sent without a Content-Length, while it streams', async () => {
    const t = await withOrigin(await createTenant());
    const chunk = new TextEncoder().encode('x'.repeat(16 * 1024));
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 8) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const res = await gateway('/auth/browser-token', {
      method: 'POST',
      headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
      body,
      // @ts-expect-error: workerd's RequestInit takes `duplex` for a streamed body
      duplex: 'half',
    });
    await expectRefusal(res, 'PAYLOAD_TOO_LARGE');
  });

  it('the operator API refuses an oversized body too', async () => {
    const res = await admin('/tenants', {
      method: 'POST',
      body: JSON.stringify({
        name: 'big',
        platform_key: platformKeys.demo,
        pad: 'x'.repeat(70 * 1024),
      }),
    });
    await expectRefusal(res, 'PAYLOAD_TOO_LARGE');
  });
});

describe('an open event stream ends with its credentials', () => {
  const FAST = { LEASE_MAX_MS: '200' };

  /**
   * Opens a session event stream and resolves once it is open (the 101 is in, so
   * the gateway holds both sockets and checks the credentials from now on), with
   * the close code to come. A test changes the tenant or token only after that:
   * a change while the upgrade is still in flight would refuse the upgrade itself.
   */
  async function openStream(t: TestTenant, token = t.token, origin?: string) {
    const teams = await envelope(
      await gateway('/team/lists', { headers: { authorization: t.token } }),
    );
    const created = await envelope(
      await gateway('/session/create', {
        method: 'POST',
        headers: { authorization: t.token, 'content-type': 'application/json' },
        body: JSON.stringify({ team_id: teams.data.data[0].team_id, task: 'watch me' }),
      }),
    );
    const res = await gatewayWith(FAST, `/session/ws/${created.data.session_id}`, {
      headers: {
        upgrade: 'websocket',
        ...(origin
          ? { origin, 'sec-websocket-protocol': `apgw, ${token}` }
          : { authorization: token }),
      },
    });
    expect(res.status).toBe(101);
    const ws = res.webSocket;
    if (!ws) throw new Error('no WebSocket');
    const closed = new Promise<number>((resolve) =>
      ws.addEventListener('close', (e) => resolve(e.code)),
    );
    ws.accept();
    return { closed };
  }

  it('does not follow a redirect of the upstream handshake, whose URL carries the platform key', async () => {
    const t = await createTenant();
    const id = requestId('ws-redirect');
    const elsewhere = `${UPSTREAM}/session/ws/elsewhere-${crypto.randomUUID()}`;
    await injectFault({ request_id: id, kind: 'redirect', status: 302, location: elsewhere });
    const res = await gateway('/session/ws/any-session', {
      headers: { upgrade: 'websocket', authorization: t.token, 'x-request-id': id },
    });
    expect((await expectRefusal(res, 'UPSTREAM_HTTP_ERROR')).data).toMatchObject({
      upstream_status: 302,
      request_id: id,
    });
    // One handshake reached the platform: the redirected one was never made.
    expect((await upstreamSaw(id)).map((r) => r.path)).toEqual(['/session/ws/any-session']);
  });

  it('closes with 4401 once its token is revoked', async () => {
    const t = await createTenant();
    const { closed } = await openStream(t);
    await admin(`/tenants/${t.id}/tokens/${t.tokenId}`, { method: 'DELETE' });
    expect(await closed).toBe(4401);
  });

  it('closes with 4403 once its tenant is disabled', async () => {
    const t = await createTenant();
    const { closed } = await openStream(t);
    await admin(`/tenants/${t.id}/disable`, { method: 'POST' });
    expect(await closed).toBe(4403);
  });

  it('closes once its tenant is deleted', async () => {
    const t = await createTenant();
    const { closed } = await openStream(t);
    await admin(`/tenants/${t.id}`, { method: 'DELETE' });
    expect([4401, 4403]).toContain(await closed);
  });

  it("a browser token's stream closes with 4401 once its minting token is revoked", async () => {
    const t = await withOrigin(await createTenant());
    const minted = await envelope(
      await gateway('/auth/browser-token', {
        method: 'POST',
        headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ origin: APP }),
      }),
    );
    const { closed } = await openStream(t, minted.data.token, APP);
    await admin(`/tenants/${t.id}/tokens/${t.tokenId}`, { method: 'DELETE' });
    expect(await closed).toBe(4401);
  });
});

describe('cache versions belong to the platform key', () => {
  it('a purge also holds for a tenant created later with the same key', async () => {
    const res = await fetch(`${UPSTREAM}/user/apikey/new`, {
      method: 'POST',
      headers: { authorization: platformKeys.demo, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `purge-${crypto.randomUUID().slice(0, 8)}` }),
    });
    const key = ((await res.json()) as { data: { api_key: string } }).data.api_key;
    const first = await createTenant(key, 'first');
    await asTenant(first, '/team/lists');
    expect((await asTenant(first, '/team/lists')).res.headers.get('x-cache')).toBe('HIT');
    await admin(`/tenants/${first.id}/cache/purge`, { method: 'POST' });
    const later = await createTenant(key, 'later');
    expect((await asTenant(later, '/team/lists')).res.headers.get('x-cache')).toBe('MISS');
    // Tenants of one key still share what was stored after the purge.
    expect((await asTenant(first, '/team/lists')).res.headers.get('x-cache')).toBe('HIT');
  });
});

describe('pre-auth throttling', () => {
  const kvReads = async () =>
    (await envelope(await admin('/stats'))).data.isolate.kv_reads as number;
  const randomIp = () => `203.0.113.${Math.floor(Math.random() * 250)}`;
  /** What the client sees: 'OK', or the refusal's kind when its status and code agree. */
  const present = async (token: string, ip: string): Promise<string> => {
    const res = await gateway('/team/lists', {
      headers: { authorization: `Bearer ${token}`, 'cf-connecting-ip': ip },
    });
    const { code } = await envelope(res);
    if (res.status === 200 && code === 0) return 'OK';
    const kind = Object.entries(ERRORS).find(([, e]) => e.code === code && e.status === res.status);
    return kind ? kind[0] : `${res.status} ${code}`;
  };

  /**
   * Presents until the throttle refuses (RATE_LIMITED), at most two windows' worth: the
   * limiter counts in windows of the wall clock's minutes, so a run that crosses into a
   * new minute needs up to 60 more before its refusal. Fails if it never comes.
   */
  async function untilThrottled(next: () => Promise<string>): Promise<string[]> {
    const answers: string[] = [];
    while (answers.at(-1) !== 'RATE_LIMITED') {
      if (answers.length >= 125) throw new Error(`never throttled: ${answers.at(-1)}`);
      answers.push(await next());
    }
    return answers;
  }

  it('made-up tagged tokens are refused without any KV read, and never throttle their address', async () => {
    const ip = randomIp();
    const before = await kvReads();
    const answers: string[] = [];
    for (let i = 0; i < 70; i++) answers.push(await present(`apgw_${randomBase62(52)}`, ip));
    expect(answers).toEqual(Array(70).fill('INVALID_TOKEN'));
    expect(await kvReads()).toBe(before);
  });

  it('a client that keeps presenting made-up legacy-format tokens is refused before any KV read', async () => {
    const ip = randomIp();
    const answers = await untilThrottled(() => present(legacyFormatToken(), ip));
    // At least the limit's 60 refused as invalid first (more if a minute began meanwhile).
    expect(answers.slice(0, -1).every((a) => a === 'INVALID_TOKEN')).toBe(true);
    expect(answers.length).toBeGreaterThan(60);
    const before = await kvReads();
    const refused = await gateway('/team/lists', {
      headers: { authorization: `Bearer ${legacyFormatToken()}`, 'cf-connecting-ip': ip },
    });
    expect((await expectRefusal(refused, 'RATE_LIMITED')).data.policy).toBe('failed-auth');
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(await kvReads()).toBe(before);
    // Another client is not held back.
    const t = await createTenant();
    expect(await present(t.token, '198.51.100.7')).toBe('OK');
  });

  it('never refuses a valid token because others failed from its address', async () => {
    const ip = randomIp();
    await untilThrottled(() => present(legacyFormatToken(), ip));
    // A token this isolate has never seen, from the throttled address.
    const t = await createTenant();
    expect(await present(t.token, ip)).toBe('OK');
    // Tokens that were deleted but are still well tagged fail as unknown, never as throttled.
    for (let i = 0; i < 65; i++) {
      expect(await present(await unissuedToken(), ip)).toBe('INVALID_TOKEN');
    }
    expect(await present(t.token, ip)).toBe('OK');
  });

  it('counts an IPv6 /64 as one client, so rotating addresses inside it does not evade', async () => {
    const prefix = `2001:db8:${Math.floor(Math.random() * 0xffff).toString(16)}:1`;
    let i = 0;
    const answers = await untilThrottled(() => {
      i++;
      return present(legacyFormatToken(), `${prefix}:${i.toString(16)}::${i}`);
    });
    expect(answers.length).toBeGreaterThan(60);
  });

  it('answers a malformed token exactly as an unknown one', async () => {
    const unknown = await envelope(
      await gateway('/team/lists', { headers: { authorization: await unissuedToken() } }),
    );
    const malformed = await envelope(
      await gateway('/team/lists', {
        headers: { authorization: `${(await unissuedToken()).slice(0, -1)}x` },
      }),
    );
    expect(malformed.code).toBe(ERRORS.INVALID_TOKEN.code);
    expect(malformed.code).toBe(unknown.code);
    expect(malformed.msg).toBe(unknown.msg);
  });
});

describe('legacy tokens (issued before keyed tags)', () => {
  /** A token as the gateway issued them before tags: its records written as they were then. */
  async function legacyTokenOf(t: TestTenant): Promise<string> {
    const token = legacyFormatToken();
    const record = {
      id: `tok_${randomBase62(16)}`,
      tenant_id: t.id,
      name: 'legacy',
      prefix: token.slice(0, 9),
      last4: token.slice(-4),
      scopes: ['teams:read'],
      created_at: new Date().toISOString(),
      expires_at: null,
    };
    const hash = await hashToken(token);
    await testEnv.TENANTS.put(tokenKey(hash), JSON.stringify(record));
    await testEnv.TENANTS.put(tenantTokenKey(t.id, record.id), hash, { metadata: record });
    return token;
  }

  it('work until LEGACY_TOKENS_UNTIL, then are refused without a KV read', async () => {
    const t = await createTenant();
    const token = await legacyTokenOf(t);
    const call = (until: string) =>
      gatewayWith({ LEGACY_TOKENS_UNTIL: until }, '/team/lists', {
        headers: { authorization: `Bearer ${token}` },
      });
    expect((await call('2999-01-01')).status).toBe(200);
    const before = await kvReads();
    const late = await call('2026-01-01');
    expect(late.status).toBe(401);
    expect((await envelope(late)).code).toBe(ERRORS.INVALID_TOKEN.code);
    expect(await kvReads()).toBe(before);
  });

  it('are listed as legacy (no tag_kid), and rotation replaces one with a tagged token', async () => {
    const t = await createTenant();
    await legacyTokenOf(t);
    // As after the upgrade: the guard takes in the tokens KV held before.
    await guardFromBeforeTokenRows(t.id);
    const listed = await envelope(await admin(`/tenants/${t.id}/tokens`));
    const legacy = listed.data.tokens.find((k: { name: string }) => k.name === 'legacy');
    expect(legacy.tag_kid).toBeUndefined();
    const issued = listed.data.tokens.find((k: { name: string }) => k.name !== 'legacy');
    expect(issued.tag_kid).toBe('k2');
    const rotated = await envelope(
      await admin(`/tenants/${t.id}/tokens/${legacy.id}/rotate`, {
        method: 'POST',
        body: JSON.stringify({ overlap_s: 60 }),
      }),
    );
    expect(rotated.data.token).toMatch(/^apgw_[0-9A-Za-z]{52}$/);
    expect(rotated.data.tag_kid).toBe('k2');
  });

  async function kvReads() {
    return (await envelope(await admin('/stats'))).data.isolate.kv_reads as number;
  }
});

describe('the lower findings', () => {
  it('an upstream 3xx becomes a 502 envelope, not a redirect without Location', async () => {
    const t = await createTenant();
    const id = requestId('redirect');
    await injectFault({ request_id: id, kind: 'status', status: 302 });
    const { res, body } = await asTenant(t, '/agent/lists', { headers: { 'x-request-id': id } });
    expect(res.status).toBe(502);
    expect(body.code).toBe(ERRORS.UPSTREAM_HTTP_ERROR.code);
    expect(body.data.upstream_status).toBe(302);
  });

  it('a browser token under a burst of 5 can still create a session (cost 5)', async () => {
    const t = await withOrigin(await createTenant());
    await admin(`/tenants/${t.id}/limits`, {
      method: 'PUT',
      body: JSON.stringify({ policies: [{ name: 'burst', limit: 5, window_s: 10 }] }),
    });
    const team = (await asTenant(t, '/team/lists')).body.data.data[0].team_id;
    const minted = await envelope(
      await gateway('/auth/browser-token', {
        method: 'POST',
        headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ origin: APP }),
      }),
    );
    // A fresh window: the reads above used some of this one.
    await admin(`/tenants/${t.id}/limits`, {
      method: 'PUT',
      body: JSON.stringify({ policies: [{ name: 'burst2', limit: 5, window_s: 10 }] }),
    });
    const res = await gateway('/session/create', {
      method: 'POST',
      headers: {
        authorization: `Bearer ${minted.data.token}`,
        origin: APP,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ team_id: team }),
    });
    expect(res.status, JSON.stringify(await res.clone().json())).toBe(200);
  });

  it('a status check reads filter values through the cache even when the caller says no-cache', async () => {
    const t = await createTenant();
    await asTenant(t, '/user/call/filter_values');
    for (const cc of ['no-cache', 'no-store']) {
      const { res, id } = await asTenant(t, '/user/call/lists?status=success', {
        headers: { 'cache-control': cc },
      });
      expect(res.status).toBe(200);
      expect((await upstreamSaw(id)).map((r) => r.path)).toEqual(['/user/call/lists']);
    }
  });

  it('refuses a browser token whose signature carries padding', async () => {
    const t = await withOrigin(await createTenant());
    const ring = await keyRing(testEnv.KEY_ENCRYPTION_KEY ?? '');
    const token = await signBrowserToken(ring, {
      ten: t.id,
      tok: t.tokenId,
      org: APP,
      scp: ['teams:read'],
      exp: Math.floor(Date.now() / 1000) + 600,
      prt: 'bpad',
    });
    const ok = await gateway('/agent/lists', {
      headers: { authorization: `Bearer ${token}`, origin: APP },
    });
    // agents:read was not granted: the token itself is good.
    expect((await expectRefusal(ok, 'SCOPE_REQUIRED')).data.scope).toBe('agents:read');
    const padded = await gateway('/team/lists', {
      headers: { authorization: `Bearer ${token}=`, origin: APP },
    });
    expect(padded.status).toBe(401);
    expect((await envelope(padded)).code).toBe(ERRORS.INVALID_TOKEN.code);
  });

  it('a revoked token answers 40102, as docs/ERRORS.md says', async () => {
    const t = await createTenant();
    await admin(`/tenants/${t.id}/tokens/${t.tokenId}`, { method: 'DELETE' });
    const { res, body } = await asTenant(t, '/team/lists');
    expect(res.status).toBe(401);
    expect(body.code).toBe(ERRORS.TOKEN_REVOKED.code);
  });

  it('refuses tenant and token names with control characters (terminal escapes)', async () => {
    const res = await admin('/tenants', {
      method: 'POST',
      body: JSON.stringify({
        name: 'evil\u001b[2J\u001b[31mname',
        platform_key: platformKeys.demo,
      }),
    });
    expect((await expectRefusal(res, 'VALIDATION_FAILED')).msg).toContain('control characters');
    const t = await createTenant();
    const token = await admin(`/tenants/${t.id}/tokens`, {
      method: 'POST',
      body: JSON.stringify({ name: 'bell\u0007' }),
    });
    expect((await expectRefusal(token, 'VALIDATION_FAILED')).msg).toContain('control characters');
  });

  it.each([
    ['a right-to-left override', 'invoice\u202Egpj.exe'],
    ['a zero-width space', 'acme\u200Bcorp'],
    ['a left-to-right isolate', '\u2066acme\u2069'],
  ])('refuses a name with %s (a format character)', async (_, name) => {
    const res = await admin('/tenants', {
      method: 'POST',
      body: JSON.stringify({ name, platform_key: platformKeys.demo }),
    });
    const body = await envelope(res);
    expect(res.status).toBe(400);
    expect(body.code).toBe(ERRORS.VALIDATION_FAILED.code);
    expect(body.msg).toContain('format characters');
  });
});
