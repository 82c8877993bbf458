/**
 * OAuth in real Chromium (Debian's, driven by playwright-core), with the built gateway on
 * plain workerd in front of the emulator, and a public client: a single page with no
 * backend, on its own loopback origin (another port), served by this test. The page
 * registers itself (RFC 7591), sends the partner to the gateway, which sends it to the
 * portal's consent; the partner signs in with its portal link in the same tab, unchecks a
 * scope and approves; the page exchanges its code with its PKCE verifier, calls the API
 * and /mcp with the token from its own origin (CORS), and once the partner revokes the app
 * in the portal, its next call is refused. Nothing leaves loopback.
 */
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PLATFORM_KEY } from '../../emulator/seed';
import { type RunningEmulator, startEmulator } from '../../emulator/server';
import { type GatewayHost, startGateway } from '../../scripts/workerd-host';
import { operatorCall } from './operator-call';

const AXE_PATH = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

let emulator: RunningEmulator;
let gateway: GatewayHost;
let browser: Browser;
let app: Server;
let appOrigin = '';
const tenant = { id: '', name: 'Acme travel' };

/** A GET without a body, a POST with one. */
const adminCall = (path: string, body?: unknown): Promise<any> =>
  operatorCall(gateway, body === undefined ? 'GET' : 'POST', path, body);

/**
 * The public client: one page, no backend. `/` registers and starts the flow; `/callback`
 * checks the state, exchanges the code with the verifier, and calls the API and /mcp;
 * `/again` calls the API once more with the token it kept. Each shows what it got.
 */
function clientPage(gatewayUrl: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Demo SPA</title></head>
<body><h1>Demo SPA</h1><pre id="out">working</pre><script type="module">
const GW = ${JSON.stringify(gatewayUrl)};
const out = (o) => { document.getElementById('out').textContent = JSON.stringify(o); };
const b64 = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
const redirect = location.origin + '/callback';
async function start() {
  const reg = await fetch(GW + '/oauth/register', { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Demo SPA', redirect_uris: [redirect] }) });
  const client = await reg.json();
  const verifier = b64(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = b64(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
  const state = b64(crypto.getRandomValues(new Uint8Array(16)));
  sessionStorage.setItem('flow', JSON.stringify({ client_id: client.client_id, verifier, state }));
  const q = new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: redirect,
    code_challenge: challenge, code_challenge_method: 'S256', state, scope: 'full' });
  location.assign(GW + '/oauth/authorize?' + q);
}
async function callApis(token) {
  const api = await fetch(GW + '/team/lists', { headers: { authorization: 'Bearer ' + token } });
  const mcp = await fetch(GW + '/mcp', { method: 'POST', headers: { authorization: 'Bearer ' + token,
    'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call',
    params: { name: 'team.list', arguments: { page_size: 1 } } }) });
  return { api: { status: api.status, body: await api.json() }, mcp: { status: mcp.status, body: await mcp.json() } };
}
async function callback() {
  const params = new URLSearchParams(location.search);
  const flow = JSON.parse(sessionStorage.getItem('flow'));
  if (params.get('state') !== flow.state) return out({ error: 'state mismatch' });
  if (params.get('error')) return out({ error: params.get('error') });
  const res = await fetch(GW + '/oauth/token', { method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: params.get('code'),
      code_verifier: flow.verifier, redirect_uri: redirect, client_id: flow.client_id }) });
  const tokens = await res.json();
  sessionStorage.setItem('token', tokens.access_token);
  history.replaceState(null, '', '/callback');
  out({ iss: params.get('iss'), scope: tokens.scope, token_status: res.status, ...(await callApis(tokens.access_token)) });
}
async function again() { out(await callApis(sessionStorage.getItem('token'))); }
const run = { '/': start, '/callback': callback, '/again': again }[location.pathname];
run().catch((e) => out({ error: String(e) }));
</script></body></html>`;
}

/** axe-core's serious and critical findings on the page as it is now. */
async function seriousViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: AXE_PATH });
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: () => Promise<any> } }).axe;
    return (await axe.run()).violations as { id: string; impact: string; nodes: unknown[] }[];
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}, ${v.nodes.length} nodes)`);
}

async function result(page: Page): Promise<any> {
  await page.waitForFunction(() => document.getElementById('out')?.textContent !== 'working');
  return JSON.parse((await page.textContent('#out')) ?? '{}');
}

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
  gateway = await startGateway({ platformBaseUrl: emulator.url });
  tenant.id = (
    await adminCall('/tenants', { name: tenant.name, platform_key: DEMO_PLATFORM_KEY })
  ).tenant_id;
  app = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(clientPage(gateway.url));
  });
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve));
  appOrigin = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => app?.close(resolve));
  await gateway?.stop();
  await emulator?.close();
});

describe('a public client with no backend, through the portal', () => {
  it('registers, gets consent, calls the API and /mcp, and is cut off once the partner revokes it', async () => {
    const context = await browser.newContext();
    const requested: string[] = [];
    context.on('request', (r) => requested.push(r.url()));
    const page = await context.newPage();

    // The app registers and sends the partner to the gateway, which sends it to the portal.
    await page.goto(`${appOrigin}/`);
    await page.waitForURL(`${gateway.url}/portal/`);
    await expect.poll(() => page.getByTestId('consent-pending').isVisible()).toBe(true);
    // The request left the address bar for this tab's storage.
    expect(page.url()).toBe(`${gateway.url}/portal/`);

    // The partner opens its portal link in this tab: signed in, the request still waits.
    const link = await adminCall(`/tenants/${tenant.id}/portal-links`, { manage: true });
    await page.goto(link.url);
    await expect.poll(() => page.getByTestId('consent-app').textContent()).toBe('Demo SPA');
    expect(await page.getByTestId('consent-host').textContent()).toBe(new URL(appOrigin).host);
    expect(await page.getByText('This app registered itself').isVisible()).toBe(true);

    // It unchecks a scope, and approves.
    await page.getByRole('checkbox', { name: 'sessions:write' }).uncheck();
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL(`${appOrigin}/callback`);
    const done = await result(page);
    expect(done.iss).toBe(gateway.url);
    expect(done.token_status).toBe(200);
    expect(done.scope.split(' ')).toContain('teams:read');
    expect(done.scope.split(' ')).not.toContain('sessions:write');
    expect(done.api.status).toBe(200);
    expect(done.api.body.code).toBe(0);
    expect(done.mcp.status).toBe(200);
    expect(done.mcp.body.result.isError).toBeFalsy();

    // The partner sees the app in the portal, and revokes it.
    await page.goto(`${gateway.url}/portal/`);
    const row = page.getByTestId('apps').getByRole('row', { name: /Demo SPA/ });
    await expect.poll(() => row.isVisible()).toBe(true);
    expect(await row.textContent()).toContain(new URL(appOrigin).host);
    await page.getByRole('button', { name: 'Revoke Demo SPA' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke now' }).click();
    await expect.poll(() => row.textContent()).toMatch(/revoked/);

    // The app's next calls are refused: the token was revoked.
    await page.goto(`${appOrigin}/again`);
    const after = await result(page);
    expect(after.api.status).toBe(401);
    expect(after.api.body.code).toBe(40102);
    expect(after.mcp.status).toBe(401);

    // Nothing but the two loopback origins was asked for.
    const origins = new Set(requested.map((u) => new URL(u).origin));
    expect([...origins].sort()).toEqual([appOrigin, gateway.url].sort());
    await context.close();
  });

  it("makes a partner's own key in the portal, shown once, and revokes it; axe finds nothing serious on the consent, the apps and the keys", async () => {
    // axe is injected as a script: this context may bypass the page's CSP to do so.
    const context = await browser.newContext({ bypassCSP: true });
    const page = await context.newPage();
    await page.goto(`${appOrigin}/`);
    await page.waitForURL(`${gateway.url}/portal/`);
    const link = await adminCall(`/tenants/${tenant.id}/portal-links`, { manage: true });
    await page.goto(link.url);
    await expect.poll(() => page.getByTestId('consent-app').textContent()).toBe('Demo SPA');
    const consent = await seriousViolations(page);
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL(`${appOrigin}/callback`);
    expect((await result(page)).api.status).toBe(200);

    await page.goto(`${gateway.url}/portal/`);
    await page.getByRole('heading', { name: 'Your keys' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('nightly sync');
    await page.getByLabel('Scopes').fill('read-only');
    await page.getByLabel('Works').selectOption('90');
    await page.getByLabel('Requests per minute (optional)').fill('30');
    await page.getByRole('button', { name: 'Make the key' }).click();
    const shown = page.locator('#new-key');
    await shown.waitFor();
    const key = await shown.inputValue();
    expect(key).toMatch(/^apgw_/);
    const keysAndApps = await seriousViolations(page);
    await page.getByRole('button', { name: 'I have saved it' }).click();
    expect(await page.locator('#new-key').count()).toBe(0);
    // The secret is on the page no more: only its prefix and last four.
    expect(await page.content()).not.toContain(key);
    const row = page.getByTestId('keys').getByRole('row', { name: /nightly sync/ });
    expect(await row.textContent()).toContain(key.slice(-4));

    const call = () =>
      fetch(`${gateway.url}/team/lists`, { headers: { authorization: `Bearer ${key}` } });
    expect((await call()).status).toBe(200);
    expect(
      (
        await fetch(`${gateway.url}/session/create`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: '{}',
        })
      ).status,
    ).toBe(403);
    await page.getByRole('button', { name: 'Revoke nightly sync' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke now' }).click();
    await expect.poll(() => row.textContent()).toMatch(/revoked/);
    expect((await call()).status).toBe(401);

    // The operator sees who made it.
    const tokens = await adminCall(`/tenants/${tenant.id}/tokens`);
    const made = tokens.tokens.find((t: { name: string }) => t.name === 'nightly sync');
    expect(made.made_by).toMatch(/^token:tok_/);
    expect({ consent, keysAndApps }).toEqual({ consent: [], keysAndApps: [] });
    await context.close();
  });
});
