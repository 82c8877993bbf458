/** Responses the gateway makes itself: 404, 405, request ids, settings. */
import { describe, expect, it } from 'vitest';
import { ERRORS } from '../src/errors';
import {
  asTenant,
  createTenant,
  envelope,
  expectRefusal,
  gateway,
  gatewayWith,
  platformKeys,
  testEnv,
  upstreamSaw,
} from './helpers';

describe('unknown routes and methods', () => {
  it('answers an unknown path with a 404 envelope', async () => {
    const res = await gateway('/no/such/route');
    const body = await envelope(res);
    expect(res.status).toBe(404);
    expect(body.code).toBe(ERRORS.NOT_FOUND.code);
    expect(body.msg).toBe(
      'No route for GET /no/such/route; the routes are at /docs and /openapi.json',
    );
    expect(body.data).toEqual({ request_id: res.headers.get('x-request-id') });
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('traceparent')).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  });

  it("points an unknown operator API path to the operator API's docs, not the partner docs", async () => {
    const res = await gateway('/admin/no/such/route', {
      headers: { authorization: `Bearer ${testEnv.ADMIN_TOKEN}` },
    });
    const body = await envelope(res);
    expect(res.status).toBe(404);
    expect(body.code).toBe(ERRORS.NOT_FOUND.code);
    expect(body.msg).toBe(
      'No route for GET /admin/no/such/route; the operator API is described in docs/OPERATING.md',
    );
    expect(body.msg).not.toContain(testEnv.ADMIN_TOKEN);
  });

  it('answers a known path with a wrong method with 405 and Allow', async () => {
    const tenant = await createTenant();
    const res = await gateway('/team/lists', {
      method: 'POST',
      headers: { authorization: tenant.token },
    });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET');
    expect((await envelope(res)).code).toBe(ERRORS.METHOD_NOT_ALLOWED.code);
  });

  it('lists every method of a shared path in Allow', async () => {
    const res = await gateway('/session/info/abc', { method: 'DELETE' });
    await expectRefusal(res, 'METHOD_NOT_ALLOWED');
    expect(res.headers.get('allow')).toBe('GET, PUT');
  });
});

describe('health', () => {
  it('answers /healthz without a token and without calling the platform', async () => {
    const res = await gateway('/healthz');
    expect(res.status).toBe(200);
    expect(await envelope(res)).toEqual({ code: 0, msg: 'Success', data: { status: 'ok' } });
  });

  it('fails /healthz while a setting is bad', async () => {
    const res = await gatewayWith({ UPSTREAM_TIMEOUT_MS: 'x' }, '/healthz');
    expect((await expectRefusal(res, 'MISCONFIGURED')).msg).toContain('UPSTREAM_TIMEOUT_MS');
  });
});

describe('request ids', () => {
  it('generates one when absent and returns it', async () => {
    const res = await gateway('/nowhere');
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('keeps a caller id, sends it upstream and returns it', async () => {
    const tenant = await createTenant();
    const { res, id } = await asTenant(tenant, '/agent/lists');
    expect(res.headers.get('x-request-id')).toBe(id);
    expect((await upstreamSaw(id))[0]!.headers['x-request-id']).toBe(id);
  });

  it('replaces an id with unsafe characters', async () => {
    const res = await gateway('/nowhere', { headers: { 'x-request-id': 'bad id<script>' } });
    // A fresh id in its place, the same one the envelope carries.
    const fresh = res.headers.get('x-request-id');
    expect(fresh).toMatch(/^[0-9a-f-]{36}$/);
    expect((await expectRefusal(res, 'NOT_FOUND')).data.request_id).toBe(fresh);
  });
});

describe('headers never forwarded', () => {
  it('drops Cookie, hop-by-hop headers and the caller credentials', async () => {
    const tenant = await createTenant();
    const { id } = await asTenant(tenant, '/user/call/lists', {
      headers: {
        authorization: `Bearer ${tenant.token}`,
        'x-api-key': tenant.token,
        cookie: 'session=abc',
        connection: 'keep-alive, x-secret',
        'x-secret': 'hop',
        'proxy-authorization': 'Basic Zm9vOmJhcg==',
        te: 'trailers',
        'accept-language': 'de-DE',
      },
    });
    const [seen] = await upstreamSaw(id);
    expect(seen!.headers.cookie).toBeUndefined();
    expect(seen!.headers['proxy-authorization']).toBeUndefined();
    expect(seen!.headers['x-secret']).toBeUndefined();
    expect(seen!.headers.authorization).toBeUndefined();
    expect(JSON.stringify(seen!.headers)).not.toContain(tenant.token);
    expect(seen!.headers['accept-language']).toBe('de-DE');
  });
});

describe('settings', () => {
  it('a bad setting fails with a 500 envelope that names it', async () => {
    const res = await gatewayWith({ UPSTREAM_TIMEOUT_MS: 'soon' }, '/team/lists');
    const body = await envelope(res);
    expect(res.status).toBe(500);
    expect(body.code).toBe(ERRORS.MISCONFIGURED.code);
    expect(body.msg).toContain('UPSTREAM_TIMEOUT_MS');
  });

  it('a missing PLATFORM_BASE_URL is named', async () => {
    const res = await gatewayWith({ PLATFORM_BASE_URL: undefined }, '/team/lists');
    expect((await expectRefusal(res, 'MISCONFIGURED')).msg).toContain('PLATFORM_BASE_URL');
  });

  it('never puts the admin token in the message', async () => {
    const res = await gatewayWith(
      { ADMIN_TOKEN: 'short', UPSTREAM_TIMEOUT_MS: '-1' },
      '/team/lists',
    );
    const body = await expectRefusal(res, 'MISCONFIGURED');
    expect(body.msg).toContain('ADMIN_TOKEN');
    expect(body.msg).not.toContain('short');
  });

  it('an unknown operation in ROUTE_OVERRIDES is refused', async () => {
    const res = await gatewayWith(
      { ROUTE_OVERRIDES: '{"team.lists": {"credential": "x-api-key"}}' },
      '/team/lists',
    );
    expect((await expectRefusal(res, 'MISCONFIGURED')).msg).toContain(
      'team.lists: is not a known operation id',
    );
  });

  it('ROUTE_OVERRIDES changes the upstream path and credential header without code', async () => {
    const tenant = await createTenant();
    const overrides = {
      ROUTE_OVERRIDES: JSON.stringify({
        'team.list': { upstream_path: '/agent/lists', credential: 'x-api-key' },
      }),
    };
    const id = `override-${crypto.randomUUID()}`;
    const res = await gatewayWith(overrides, '/team/lists', {
      headers: { authorization: tenant.token, 'x-request-id': id, 'cache-control': 'no-cache' },
    });
    expect(res.status).toBe(200);
    const [seen] = await upstreamSaw(id);
    expect(seen!.path).toBe('/agent/lists');
    expect(seen!.headers['x-api-key']).toBe(platformKeys.demo);
    expect(seen!.headers.authorization).toBeUndefined();
  });

  it('PLATFORM_AUTH_SCHEME puts a scheme before the key in Authorization', async () => {
    const tenant = await createTenant(undefined, undefined, ['full', 'apikeys:read']);
    const id = `scheme-${crypto.randomUUID()}`;
    await gatewayWith({ PLATFORM_AUTH_SCHEME: 'Bearer' }, '/user/apikey/lists', {
      headers: { authorization: tenant.token, 'x-request-id': id },
    });
    expect((await upstreamSaw(id))[0]!.headers.authorization).toBe(`Bearer ${platformKeys.demo}`);
  });

  it('without ADMIN_TOKEN the operator API is off', async () => {
    const res = await gatewayWith(
      { ADMIN_TOKEN: undefined },
      '/admin/tenants/ten_0000000000000000',
      {
        headers: { authorization: `Bearer ${testEnv.ADMIN_TOKEN}` },
      },
    );
    expect(res.status).toBe(404);
    expect((await envelope(res)).code).toBe(ERRORS.ADMIN_DISABLED.code);
  });
});
