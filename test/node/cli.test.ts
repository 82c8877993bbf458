/**
 * The operator CLI against a running gateway (wrangler dev + emulator):
 * onboard a partner with a read-only token, rotate it without a failed
 * request, revoke it; and clear errors for bad input.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PLATFORM_KEY } from '../../emulator/seed';
import type { Stack } from '../../scripts/stack';
import { freshStack } from './fresh-stack';

const run = promisify(execFile);
let stack: Stack;

const STATE = '.wrangler/cli-test-state';

beforeAll(async () => {
  stack = await freshStack(STATE);
});
afterAll(async () => {
  await stack?.stop();
});

async function cli(...args: string[]) {
  try {
    const { stdout, stderr } = await run(
      'tsx',
      ['scripts/admin.ts', '--url', stack.gatewayUrl, ...args],
      {
        env: { ...process.env, ADMIN_TOKEN: stack.adminToken, PLATFORM_KEY: DEMO_PLATFORM_KEY },
      },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const token = (out: string) => /apgw_[0-9A-Za-z]{52}/.exec(out)![0];
const call = (t: string, path = '/team/lists', init: RequestInit = {}) =>
  fetch(`${stack.gatewayUrl}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${t}`, ...init.headers },
  });

describe('operator CLI', () => {
  it('refuses to send the operator token over plain http to anything but loopback', async () => {
    for (const url of ['http://gateway.example.com', 'http://10.0.0.8:8787']) {
      const { code, stderr } = await run(
        'tsx',
        ['scripts/admin.ts', '--url', url, 'tenant', 'list'],
        {
          env: { ...process.env, ADMIN_TOKEN: stack.adminToken },
        },
      ).then(
        (ok) => ({ code: 0, stderr: ok.stderr }),
        (err: { code: number; stderr: string }) => err,
      );
      expect(code, url).not.toBe(0);
      expect(stderr).toContain('over plain http: use https');
      expect(stderr).not.toContain(stack.adminToken);
    }
  });

  it('warns on stderr when a token is given an API key scope', async () => {
    const created = await cli('tenant', 'create', '--name', 'Keys', '--scopes', 'teams:read');
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).not.toContain('warning');
    const tenantId = /ten_[0-9A-Za-z]{16}/.exec(created.stdout)?.[0] ?? '';
    const issued = await cli(
      'token',
      'issue',
      tenantId,
      '--name',
      'k',
      '--scopes',
      'apikeys:admin',
    );
    expect(issued.code, issued.stderr).toBe(0);
    expect(issued.stderr).toMatch(/^warning: apikeys:admin lets this token manage .* unmasked/m);
  });

  it('prints a tenant as aligned fields, and as its data with --json', async () => {
    const created = await cli('tenant', 'create', '--name', 'Shown', '--scopes', 'teams:read');
    const tenantId = /ten_[0-9A-Za-z]{16}/.exec(created.stdout)?.[0] ?? '';
    const shown = await cli('tenant', 'get', tenantId);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^id\\s+${tenantId}$`, 'm'));
    expect(shown.stdout).toMatch(/^name\s+Shown$/m);
    expect(shown.stdout).not.toContain('{');
    expect(shown.stdout).not.toContain(DEMO_PLATFORM_KEY);
    const json = await cli('tenant', 'get', tenantId, '--json');
    expect((JSON.parse(json.stdout) as { id: string; name: string }).name).toBe('Shown');
    expect(json.stdout).not.toContain(DEMO_PLATFORM_KEY);
  });

  it('onboards a read-only partner, rotates without a failed request, revokes', async () => {
    const created = await cli('tenant', 'create', '--name', 'Partner', '--scopes', 'read-only');
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).not.toContain(DEMO_PLATFORM_KEY);
    const tenantId = /ten_[0-9A-Za-z]{16}/.exec(created.stdout)![0];
    const first = token(created.stdout);
    expect((await call(first)).status).toBe(200);
    const write = await call(first, '/session/create', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"team_id":"3f6c1e2a-5b7d-4c8e-9f01-23456789abcd"}',
    });
    expect(write.status).toBe(403);
    expect(((await write.json()) as { code: number }).code).toBe(40300); // SCOPE_REQUIRED

    const limits = await cli(
      'limits',
      'set',
      tenantId,
      '--policy',
      'burst=1000/10',
      '--daily',
      '10000',
    );
    expect(limits.code, limits.stderr).toBe(0);

    const listed = await cli('token', 'list', tenantId);
    const tokenId = /tok_[0-9A-Za-z]{16}/.exec(listed.stdout)![0];
    expect(listed.stdout).not.toContain(first);

    // A client keeps calling while the operator rotates; it switches when told.
    let current = first;
    let failures = 0;
    let calls = 0;
    let withNew = 0;
    let stop = false;
    const traffic = (async () => {
      while (!stop) {
        const using = current;
        calls++;
        if ((await call(using)).status !== 200) failures++;
        if (using !== first) withNew++;
      }
    })();
    const rotated = await cli('token', 'rotate', tenantId, tokenId, '--overlap', '60');
    expect(rotated.code, rotated.stderr).toBe(0);
    current = token(rotated.stdout);
    // The client keeps calling until it has made three calls with the new token.
    for (let waited = 0; withNew < 3; waited += 20) {
      if (waited > 30_000) throw new Error('the client made no three calls with the new token');
      await new Promise((r) => setTimeout(r, 20));
    }
    stop = true;
    await traffic;
    expect(calls).toBeGreaterThan(3);
    expect(failures).toBe(0);
    expect((await call(first)).status).toBe(200);

    const revoked = await cli('token', 'revoke', tenantId, tokenId);
    expect(revoked.code, revoked.stderr).toBe(0);
    const revokedCall = await call(first);
    expect(revokedCall.status).toBe(401);
    expect(((await revokedCall.json()) as { code: number }).code).toBe(40102); // TOKEN_REVOKED
    expect((await call(current)).status).toBe(200);
    // The revoked token still lists for a while: its line says it is revoked.
    const after = (await cli('token', 'list', tenantId)).stdout.split('\n');
    expect(after.find((line) => line.startsWith(tokenId))).toMatch(/\] {2}revoked \d{4}-/);
    const successorId = /New token (tok_[0-9A-Za-z]{16})/.exec(rotated.stdout)![1]!;
    expect(after.find((line) => line.startsWith(successorId))).toContain(']  expires never');

    const usage = await cli('usage', tenantId);
    expect(usage.stdout).toMatch(/burst\s+\d+ used of 1000/);
    const audit = await cli('audit', '--tenant', tenantId);
    expect(audit.stdout).toMatch(
      /token\.revoked[\s\S]*token\.rotated[\s\S]*limits\.set[\s\S]*tenant\.created/,
    );
  });

  it("sets a plan, puts two tenants on it, and refuses both at the plan's new limit", async () => {
    const plan = `cli-${Date.now().toString(36)}`;
    const set = await cli(
      'plan',
      'set',
      plan,
      '--policy',
      'hourly=1000/3600:fixed',
      '--limiter',
      'exact',
    );
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toMatch(
      new RegExp(`^Plan ${plan} set \\(version \\d+\\): 0 tenants on it\\.`),
    );
    const tokens: string[] = [];
    for (const name of ['On plan A', 'On plan B']) {
      const created = await cli('tenant', 'create', '--name', name, '--plan', plan);
      expect(created.code, created.stderr).toBe(0);
      tokens.push(token(created.stdout));
    }
    for (const t of tokens) expect((await call(t)).status).toBe(200);
    const lowered = await cli(
      'plan',
      'set',
      plan,
      '--policy',
      'hourly=1/3600:fixed',
      '--limiter',
      'exact',
    );
    expect(lowered.stdout).toContain('2 tenants on it.');
    for (const t of tokens) {
      const refused = await call(t);
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as { data: { policy: string } }).data.policy).toBe('hourly');
    }
    const listed = await cli('plan', 'list');
    expect(listed.stdout).toMatch(new RegExp(`${plan}\\s+2 tenants`));
    const inUse = await cli('plan', 'remove', plan);
    expect(inUse.code).toBe(1);
    expect(inUse.stderr).toMatch(/has 2 tenant\(s\).*code 40900, HTTP 409/);
    const unknown = await cli('tenant', 'update', 'ten_0000000000000000', '--plan', 'no-such');
    expect(unknown.code).toBe(1);
  });

  it('makes a partner portal link whose token reads usage only, and refuses a long one', async () => {
    const created = await cli('tenant', 'create', '--name', 'Portal');
    const tenantId = /ten_[0-9A-Za-z]{16}/.exec(created.stdout)?.[0] ?? '';
    const link = await cli('portal', 'link', tenantId, '--expires-in', '600');
    expect(link.code, link.stderr).toBe(0);
    const url = /https?:\/\/\S+\/portal\/#token=apgw_[0-9A-Za-z]{52}/.exec(link.stdout)?.[0] ?? '';
    expect(url.startsWith(`${stack.gatewayUrl}/portal/#token=`)).toBe(true);
    const linkToken = token(url);
    expect((await call(linkToken, '/usage')).status).toBe(200);
    expect((await call(linkToken, '/team/lists')).status).toBe(403);
    // The audit's columns line up, the long portal_link.created included.
    const audit = (await cli('audit', '--tenant', tenantId)).stdout.split('\n');
    const entries = audit.filter((line) => line.includes(tenantId));
    expect(entries.map((line) => line.split(/\s+/)[3])).toEqual([
      'portal_link.created',
      'tenant.created',
    ]);
    expect(new Set(entries.map((line) => line.indexOf(tenantId))).size).toBe(1);
    const long = await cli('portal', 'link', tenantId, '--expires-in', '7200');
    expect(long.code).toBe(1);
    expect(long.stderr).toMatch(/expires_in_s.*code 40001, HTTP 400/);
  });

  it('explains bad input and unreachable gateways, exiting 1', async () => {
    const missing = await cli('tenant', 'create');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('Missing --name');
    const refused = await cli('tenant', 'get', 'nope');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/id must be a tenant id .*code 40001, HTTP 400/);
    const badScope = await cli('token', 'issue', 'ten_0000000000000000', '--name', 'x');
    expect(badScope.stderr).toContain('No such tenant');
    const down = await run(
      'tsx',
      ['scripts/admin.ts', '--url', 'http://127.0.0.1:1', 'tenant', 'list'],
      { env: { ...process.env, ADMIN_TOKEN: 'x'.repeat(20) } },
    ).catch((e: { stderr: string }) => e);
    expect(down.stderr).toContain('Cannot reach the gateway');
    const unknown = await cli('frobnicate');
    expect(unknown.stderr).toContain('Unknown command');
  });
});

describe('tenant create checks the platform key', () => {
  it('refuses a key the platform refuses, creates nothing, and sets it only with --force', async () => {
    const name = `Bad key ${Date.now()}`;
    const madeUp = `sk-made-up-${Date.now()}0000`;
    const refused = await cli('tenant', 'create', '--name', name, '--platform-key', madeUp);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('The platform refused this key (HTTP 401)');
    expect(refused.stderr).toContain('--force');
    expect(refused.stderr).not.toContain(madeUp);
    const listed = await cli('tenant', 'list', '--page-size', '100');
    expect(listed.stdout).not.toContain(name);
    const forced = await cli(
      'tenant',
      'create',
      '--name',
      name,
      '--platform-key',
      madeUp,
      '--force',
    );
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stderr).toContain('warning: The platform refused this key (HTTP 401)');
    // A working key goes through without a word.
    const good = await cli('tenant', 'create', '--name', `${name} fixed`);
    expect(good.code, good.stderr).toBe(0);
    expect(good.stderr).toBe('');
  });
});

describe('operations import', () => {
  it('prints a PLATFORM_OPERATIONS value for what the gateway does not serve yet', async () => {
    const out = await cli('operations', 'import', 'test/fixtures/openapi/platform-next.json');
    expect(out.code, out.stderr).toBe(0);
    const value = JSON.parse(out.stdout) as Record<string, Record<string, any>>;
    expect(Object.keys(value).sort()).toEqual(['list_products', 'rename_product', 'widget.list']);
    expect(value.list_products).toMatchObject({
      method: 'GET',
      path: '/dashboard/product/lists',
      credential: 'x-api-key',
      group: 'products',
      query: { type: 'object', properties: { page_size: { maximum: 100 } } },
    });
    // An array query value cannot travel as text: left out, and said so.
    expect(value.list_products?.query.properties.ids).toBeUndefined();
    // The $ref inlined: the gateway's schemas stand alone.
    expect(value.rename_product?.body).toMatchObject({ required: ['product_name'] });
    expect(out.stderr).toContain('GET /team/lists: the gateway serves it already');
    expect(out.stderr).toContain('POST /dashboard/product/logo: its body is multipart/form-data');
    expect(out.stderr).toMatch(
      /GET \/admin\/anything: PLATFORM_OPERATIONS\.admin_thing\.path: overlaps the gateway's own/,
    );
    expect(out.stderr).toContain('query parameter ids (array) left out');
    expect(out.stderr).toMatch(/3 new operations; the value is \d+ bytes/);
    // An id the gateway takes is kept; one it would not is renamed, and said so.
    expect(out.stderr).toContain(
      'GET /dashboard/product/lists: operationId listProducts is list_products here',
    );
    expect(out.stderr).not.toContain('widget_list');
    // Each operation kept, with the scope a token needs to call it.
    expect(out.stderr).toContain(
      'widget.list: GET /dashboard/widget/lists, needs the scope widgets:read',
    );
    expect(out.stderr).toContain(
      'rename_product: POST /dashboard/product/rename/{product_id}, needs the scope products:write',
    );
    // The gateway itself takes the value.
    const checked = await fetch(`${stack.gatewayUrl}/admin/operations/check`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(value),
    });
    expect(((await checked.json()) as { data: { valid: boolean } }).data.valid).toBe(true);
  });

  it('refuses a file that is no OpenAPI 3 document', async () => {
    const out = await cli('operations', 'import', 'package.json');
    expect(out.code).toBe(1);
    expect(out.stderr).toContain('not an OpenAPI 3 document');
  });
});
