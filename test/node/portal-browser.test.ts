/**
 * The partner portal (/portal) in real Chromium (Debian's, driven by
 * playwright-core), served by the built Worker and its static assets on
 * plain workerd, in front of the emulator: a partner signs in with its token
 * or a portal link and sees its own tenant's usage, quotas and standing, and
 * only those, even when its requests name another tenant; nothing leaves
 * loopback; the token is nowhere but this tab's sessionStorage (and the one
 * display of a rotated token); axe-core finds no serious or critical issue.
 */
import { createRequire } from 'node:module';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PLATFORM_KEY, OTHER_PLATFORM_KEY } from '../../emulator/seed';
import { type RunningEmulator, startEmulator } from '../../emulator/server';
import { type GatewayHost, startGateway } from '../../scripts/workerd-host';
import { operatorCall } from './operator-call';
import { untilRecorded } from './recorded';

const AXE_PATH = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

let emulator: RunningEmulator;
let gateway: GatewayHost;
let browser: Browser;
const a = { id: '', token: '', name: 'Acme partner' };
const b = { id: '', tokenId: '', name: 'Bystander tenant' };

/** A GET without a body, a POST with one. */
const adminCall = (path: string, body?: unknown): Promise<any> =>
  operatorCall(gateway, body === undefined ? 'GET' : 'POST', path, body);

async function asToken(token: string, path: string): Promise<any> {
  const res = await fetch(`${gateway.url}${path}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: res.status, body: (await res.json()) as any };
}

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
  gateway = await startGateway({
    platformBaseUrl: emulator.url,
    // Fourteen sign-ins of one token within a minute, each a few self-service reads: more
    // than the default meter lets through (60 a minute, docs/LIMITS.md), which these tests
    // are not about (test/billable.test.ts is).
    vars: { SELF_SERVICE_PER_MINUTE: '1000' },
  });
  const tenantA = await adminCall('/tenants', { name: a.name, platform_key: DEMO_PLATFORM_KEY });
  a.id = tenantA.tenant_id;
  const rotatable = await adminCall(`/tenants/${a.id}/tokens`, {
    name: 'partner',
    scopes: ['full', 'token:rotate'],
  });
  a.token = rotatable.token;
  const tenantB = await adminCall('/tenants', { name: b.name, platform_key: OTHER_PLATFORM_KEY });
  b.id = tenantB.tenant_id;
  b.tokenId = tenantB.token_id;
  // Some traffic for both, so each has history the other must never see.
  for (let i = 0; i < 5; i++) {
    expect((await asToken(a.token, '/team/lists')).status).toBe(200);
    expect((await asToken(tenantB.token, '/team/lists')).status).toBe(200);
  }
  // The hourly rollups are written after the answers: wait (bounded) until all five of A's
  // show (the meters' spent units come in the same usage batches as the rollups).
  const until = Date.now() + 20_000;
  while (Date.now() < until) {
    const usage = await asToken(a.token, '/usage');
    const days: { requests: number }[] = usage.body.data.days;
    if (days.reduce((n, d) => n + d.requests, 0) >= 5) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gateway?.stop();
  await emulator?.close();
});

interface Watched {
  context: BrowserContext;
  page: Page;
  requested: string[];
  consoleLines: string[];
}

/** A fresh tab (its own storage) that records every URL it asks for and every console line. */
async function newTab(options: { bypassCSP?: boolean } = {}): Promise<Watched> {
  const context = await browser.newContext(options);
  const page = await context.newPage();
  const requested: string[] = [];
  const consoleLines: string[] = [];
  page.on('request', (r) => requested.push(r.url()));
  page.on('console', (m) => consoleLines.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => consoleLines.push(`pageerror: ${e.message}`));
  return { context, page, requested, consoleLines };
}

async function signIn(page: Page, token: string): Promise<number> {
  await page.goto(`${gateway.url}/portal/`);
  await page.getByLabel('Gateway token', { exact: true }).fill(token);
  const started = Date.now();
  await page.getByRole('button', { name: 'Open' }).click();
  await page.locator('.chart canvas').first().waitFor({ timeout: 15_000 });
  return Date.now() - started;
}

/** Everything a page keeps where a token must not be: markup, field values, storage, cookies, URL. */
async function exposedText(w: Watched): Promise<string> {
  const inPage = await w.page.evaluate(() => {
    const values = Array.from(document.querySelectorAll('input, textarea')).map(
      (el) => (el as HTMLInputElement).value,
    );
    const local = Object.entries(localStorage).map(([k, v]) => `${k}=${v}`);
    return [
      document.documentElement.outerHTML,
      ...values,
      ...local,
      document.cookie,
      location.href,
    ].join('\n');
  });
  const cookies = (await w.context.cookies()).map((c) => `${c.name}=${c.value}`);
  return [inPage, ...cookies, w.page.url(), ...w.consoleLines].join('\n');
}

/**
 * What tried to leave loopback: requests made elsewhere, and attempts the page's CSP blocked.
 * A blocked fetch is never a request event (a blocked image is); Chromium logs either as a
 * console error naming the Content Security Policy, so those lines count too.
 */
const offLoopback = (w: Watched) => [
  ...w.requested.filter((url) => !url.startsWith(`${gateway.url}/`) && !/^(data|blob):/.test(url)),
  ...w.consoleLines.filter((line) => /Content Security Policy/i.test(line)),
];

/** The gateway's API calls the page made (its own files under /portal/ and the icon aside). */
const apiCalls = (w: Watched) =>
  w.requested.filter((url) => /^\/(token|usage)([/?]|$)/.test(url.slice(gateway.url.length)));

async function seriousViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: AXE_PATH });
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: () => Promise<any> } }).axe;
    const result = await axe.run();
    return result.violations as { id: string; impact: string; nodes: unknown[] }[];
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}, ${v.nodes.length} nodes)`);
}

describe('/portal in Chromium', () => {
  it("shows the tenant's token, standing, quotas and usage chart; nothing leaves loopback", async () => {
    const w = await newTab();
    const ms = await signIn(w.page, a.token);
    console.log(`portal: signed in to a drawn 48-hour chart in ${ms} ms`);
    const text = await w.page.locator('main').innerText();
    expect(text).toContain(a.name);
    expect(text).toContain(a.id);
    expect(text).toContain('token:rotate');
    // The standing: the rate policies as the TenantGuard counts them (the default burst).
    const standing = w.page.locator('section', { hasText: 'Rate-limit standing now' });
    await expect(standing.getByRole('rowheader', { name: 'burst' }).count()).resolves.toBe(1);
    // Quota gauges: the default daily and monthly quotas, with A's five requests counted.
    const meters = w.page.locator('meter');
    expect(await meters.count()).toBe(2);
    expect(Number(await meters.first().getAttribute('value'))).toBeGreaterThanOrEqual(5);
    // The last 48 hours by hour first: this hour's requests and p50 are in the tables.
    expect(text).toMatch(/[1-9]\d* requests and \d+ refusals in the last 48 hours/);
    expect(await w.page.locator('.chart:has(canvas)').count()).toBe(2);
    const hour = `${new Date().toISOString().slice(0, 13).replace('T', ' ')}:00`;
    const hourRow = w.page.locator('#latency-caption ~ details tr', { hasText: hour });
    expect(await hourRow.textContent()).toMatch(/≤ \d+ ms/);
    expect(await w.page.locator('#latency-caption ~ details tbody tr').count()).toBe(48);
    // Then 30 days by day, drawn again.
    await w.page.getByRole('radio', { name: 'Last 30 days, by day' }).check();
    await w.page.getByText(/[1-9]\d* requests and \d+ refusals in the last 30 days/).waitFor();
    const today = new Date().toISOString().slice(0, 10);
    const dayRow = w.page.locator('#latency-caption ~ details tr', { hasText: today });
    expect(await dayRow.textContent()).toMatch(/≤ \d+ ms/);
    expect(await w.page.locator('#latency-caption ~ details tbody tr').count()).toBe(30);
    expect(await w.page.locator('.chart:has(canvas)').count()).toBe(2);
    expect(offLoopback(w)).toEqual([]);
    expect(w.consoleLines.filter((l) => /error|Content Security Policy/i.test(l))).toEqual([]);
    await w.context.close();
  });

  it('shows its gauges while the daily quota is spent (self-service reads spend none of it)', async () => {
    const spent = await adminCall('/tenants', {
      name: 'Spent partner',
      platform_key: DEMO_PLATFORM_KEY,
    });
    const limits = { policies: [], quota: { daily: 2 }, limiter: 'exact' };
    const res = await fetch(`${gateway.url}/admin/tenants/${spent.tenant_id}/limits`, {
      method: 'PUT',
      headers: {
        authorization: `Bearer ${gateway.adminToken}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify(limits),
    });
    expect(res.status).toBe(200);
    for (let i = 0; i < 2; i++)
      expect((await asToken(spent.token, '/team/lists')).status).toBe(200);
    const refused = await asToken(spent.token, '/team/lists');
    expect([refused.status, refused.body.code]).toEqual([429, 42901]);

    const w = await newTab();
    await signIn(w.page, spent.token);
    const gauge = w.page.locator('meter');
    expect(await gauge.count()).toBe(1);
    expect(await gauge.getAttribute('value')).toBe('2');
    expect(await gauge.getAttribute('max')).toBe('2');
    const text = await w.page.locator('main').innerText();
    // Used up: when it comes back, in words; the day is the UTC day (not "24 h").
    expect(text).toMatch(
      /daily: 2 of 2 used this UTC day, 0 left; resets in (\d+ h( \d+ min)?|\d+ min|\d+ s)\n/,
    );
    expect(text).not.toContain('42901');
    expect(text).not.toMatch(/exhausted/i);
    // Reloading the portal again and again spends nothing and keeps answering.
    for (let i = 0; i < 3; i++) {
      await w.page.getByRole('button', { name: 'Refresh' }).click();
      await w.page.locator('meter').waitFor();
    }
    expect(await w.page.locator('meter').getAttribute('value')).toBe('2');
    expect(w.consoleLines.filter((l) => /error/i.test(l))).toEqual([]);
    await w.context.close();
  });

  it('checks the token field in the browser, and shows the API error next to it', async () => {
    const w = await newTab();
    await w.page.goto(`${gateway.url}/portal/`);
    const field = w.page.getByLabel('Gateway token', { exact: true });
    await field.fill('not-a-token');
    await w.page.getByRole('button', { name: 'Open' }).click();
    await expect(w.page.locator('#token-error').innerText()).resolves.toContain('apgw_');
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    // No call was made for a malformed token.
    expect(apiCalls(w)).toEqual([]);
    // A well-formed token the gateway does not know: its envelope code, by the field.
    await field.fill(`apgw_${'A'.repeat(52)}`);
    await w.page.getByRole('button', { name: 'Open' }).click();
    await w.page.locator('#token-error', { hasText: '40101' }).waitFor();
    // This one was asked about: the same recorder saw the call.
    expect(apiCalls(w)).toEqual([`${gateway.url}/token`]);
    expect(await w.page.evaluate(() => sessionStorage.length)).toBe(0);
    await w.context.close();
  });

  it("shows only its own tenant, even when its requests name another tenant's id", async () => {
    const w = await newTab();
    // Every call the page makes is rewritten to name tenant B, in the query and in headers.
    await w.page.route(/\/(token|usage)(\?.*)?$/, async (route) => {
      const url = new URL(route.request().url());
      url.searchParams.set('tenant_id', b.id);
      url.searchParams.set('token_id', b.tokenId);
      const headers = { ...route.request().headers(), 'x-tenant-id': b.id };
      await route.continue({ url: url.toString(), headers });
    });
    await signIn(w.page, a.token);
    const html = await w.page.content();
    expect(html).toContain(a.id);
    expect(html).toContain(a.name);
    expect(html).not.toContain(b.id);
    expect(html).not.toContain(b.name);
    expect(html).not.toContain(b.tokenId);
    // And from the page's own script: the answers name tenant A alone.
    const answers = await w.page.evaluate(
      async ({ otherId }) => {
        const token = sessionStorage.getItem('gateway-token') ?? '';
        const headers = { authorization: `Bearer ${token}`, 'x-tenant-id': otherId };
        const paths = [`/usage?tenant_id=${otherId}`, `/token?tenant_id=${otherId}`];
        return Promise.all(paths.map(async (p) => (await fetch(p, { headers })).text()));
      },
      { otherId: b.id },
    );
    for (const answer of answers) {
      expect(answer).toContain(a.id);
      expect(answer).not.toContain(b.id);
    }
    expect(w.requested.some((u) => u.includes(`tenant_id=${b.id}`))).toBe(true);
    expect(offLoopback(w)).toEqual([]);
    await w.context.close();
  });

  it('keeps the token out of the DOM, localStorage, cookies, the URL and the console', async () => {
    const w = await newTab();
    await signIn(w.page, a.token);
    expect(await exposedText(w)).not.toContain(a.token);
    expect(await w.page.evaluate(() => sessionStorage.getItem('gateway-token'))).toBe(a.token);
    // A reload in the same tab stays signed in, from sessionStorage.
    await w.page.reload();
    await w.page.locator('.chart canvas').first().waitFor();
    expect(await exposedText(w)).not.toContain(a.token);
    // Signing out forgets it.
    await w.page.getByRole('button', { name: 'Sign out' }).click();
    await w.page.getByLabel('Gateway token', { exact: true }).waitFor();
    expect(await w.page.evaluate(() => sessionStorage.length)).toBe(0);
    await w.context.close();
  });

  it('opens from a portal link, and takes its token out of the address bar', async () => {
    const link = await adminCall(`/tenants/${a.id}/portal-links`, { expires_in_s: 600 });
    const linkToken = new URL(link.url).hash.replace('#token=', '');
    expect(linkToken).toMatch(/^apgw_/);
    const w = await newTab();
    await w.page.goto(link.url);
    await w.page.locator('.chart canvas').first().waitFor({ timeout: 15_000 });
    const text = await w.page.locator('main').innerText();
    expect(text).toContain(a.name);
    expect(text).toContain('portal-link');
    expect(text).toContain('usage:read');
    // A link only reads: no rotation, and the page says why.
    expect(text).toContain('This token cannot rotate itself');
    expect(await w.page.getByRole('button', { name: 'Rotate my token' }).count()).toBe(0);
    expect(w.page.url()).toBe(`${gateway.url}/portal/`);
    expect(await exposedText(w)).not.toContain(linkToken);
    // The fragment never reached the gateway: no request URL carries it.
    expect(w.requested.filter((u) => u.includes(linkToken))).toEqual([]);
    expect(offLoopback(w)).toEqual([]);
    await w.context.close();
  });

  it('turns a revoked portal link into the sign-in form with the reason by the field', async () => {
    const link = await adminCall(`/tenants/${a.id}/portal-links`, {});
    const del = await fetch(`${gateway.url}/admin/tenants/${a.id}/tokens/${link.token_id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${gateway.adminToken}` },
    });
    expect(del.status).toBe(200);
    const w = await newTab();
    await w.page.goto(link.url);
    await w.page.locator('#token-error', { hasText: '40102' }).waitFor({ timeout: 15_000 });
    expect(w.page.url()).toBe(`${gateway.url}/portal/`);
    expect(await w.page.evaluate(() => sessionStorage.length)).toBe(0);
    expect(await exposedText(w)).not.toContain(new URL(link.url).hash.slice('#token='.length));
    await w.context.close();
  });

  it('rotates its own token: shown once with a copy button, then gone from the page', async () => {
    const own = await adminCall(`/tenants/${a.id}/tokens`, {
      name: 'rotating',
      scopes: ['usage:read', 'token:rotate'],
    });
    // axe runs on the one display of the new token: this context may bypass the CSP to inject it.
    const w = await newTab({ bypassCSP: true });
    await signIn(w.page, own.token);
    const overlap = w.page.getByLabel('Old token keeps working for (seconds)');
    await overlap.fill('forever');
    await w.page.getByRole('button', { name: 'Rotate my token' }).click();
    await expect(w.page.locator('#overlap-error').innerText()).resolves.toContain('whole number');
    expect(w.requested.filter((u) => u.endsWith('/token/rotate'))).toEqual([]);

    // What the browser lets through but the gateway refuses shows by the field too: the
    // body is altered on the way, as a stale page or a tampered one would send it.
    await w.page.route('**/token/rotate', (route) =>
      route.continue({ postData: JSON.stringify({ overlap_s: -5 }) }),
    );
    await overlap.fill('60');
    await w.page.getByRole('button', { name: 'Rotate my token' }).click();
    // It asks first; Escape and Cancel leave everything as it was.
    const asking = w.page.getByRole('dialog', { name: 'Rotate your token?' });
    await asking.getByText('keeps working for 60 s').waitFor();
    await w.page.keyboard.press('Escape');
    await expect.poll(() => asking.isVisible()).toBe(false);
    await w.page.getByRole('button', { name: 'Rotate my token' }).click();
    await asking.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => asking.isVisible()).toBe(false);
    expect(w.requested.filter((u) => u.endsWith('/token/rotate'))).toEqual([]);
    await w.page.getByRole('button', { name: 'Rotate my token' }).click();
    await asking.getByRole('button', { name: 'Rotate now' }).click();
    await w.page.locator('#overlap-error', { hasText: 'overlap_s' }).waitFor();
    expect(await overlap.getAttribute('aria-invalid')).toBe('true');
    await w.page.unroute('**/token/rotate');

    await overlap.fill('600');
    await w.page.getByRole('button', { name: 'Rotate my token' }).click();
    await asking.getByRole('button', { name: 'Rotate now' }).click();
    const shown = w.page.getByLabel('New token');
    await shown.waitFor();
    const fresh = await shown.inputValue();
    expect(fresh).toMatch(/^apgw_/);
    expect(fresh).not.toBe(own.token);
    // The header says the new state at once: the token in use ends with the overlap (it
    // never did before), and which token replaces it; the new one shows at the top, under it.
    expect(await w.page.getByTestId('expiry').textContent()).toMatch(/\(in 10 min\)$/);
    expect(await w.page.getByTestId('replaced-by').textContent()).toContain(
      `replaced by …${fresh.slice(-4)}`,
    );
    const top = (selector: string) =>
      w.page.locator(selector).evaluate((el) => el.getBoundingClientRect().top);
    expect(await top('#new-token')).toBeLessThan(await top('#standing-title'));
    await expect(w.page.getByRole('button', { name: 'Copy' }).count()).resolves.toBe(1);
    expect(await seriousViolations(w.page)).toEqual([]);

    expect(await w.page.evaluate(() => document.activeElement?.id)).toBe('new-token');
    await w.page.getByRole('button', { name: 'I have saved it' }).click();
    await w.page.waitForFunction(() => document.activeElement?.id === 'rotate-title');
    // The portal carries on with the new token once it has loaded with it: the old page's
    // chart stays on screen until then, so the wait is for the token it keeps.
    await w.page.waitForFunction(
      (token) => sessionStorage.getItem('gateway-token') === token,
      fresh,
    );
    await w.page.locator('.chart canvas').first().waitFor();
    const after = await exposedText(w);
    expect(after).not.toContain(fresh);
    expect(after).not.toContain(own.token);
    // The recorder saw each rotation that was sent (the one altered on the way and this one),
    // so the checks above that none was sent could have failed.
    expect(w.requested.filter((u) => u.endsWith('/token/rotate'))).toHaveLength(2);
    // The portal now runs on the new token; both work during the overlap.
    expect(await w.page.locator('main').innerText()).toContain('rotating');
    expect((await asToken(fresh, '/token')).body.data.token.name).toBe('rotating');
    expect((await asToken(own.token, '/token')).status).toBe(200);
    await w.context.close();
  });

  it('says why a token cannot rotate itself, and whom to ask', async () => {
    const plain = await adminCall(`/tenants/${a.id}/tokens`, {
      name: 'no-rotate',
      scopes: ['usage:read'],
    });
    const w = await newTab();
    await signIn(w.page, plain.token);
    const why = w.page.getByTestId('no-rotate');
    expect(await why.textContent()).toContain('lacks the scope token:rotate');
    expect(await why.textContent()).toContain('Ask your gateway operator');
    expect(await w.page.getByRole('button', { name: 'Rotate my token' }).count()).toBe(0);
    await w.context.close();
  });

  it('keeps the expiry true as time passes, and says when the token has ended', async () => {
    const link = await adminCall(`/tenants/${a.id}/portal-links`, { expires_in_s: 120 });
    const w = await newTab();
    // The page's clock: installed before it loads, then moved on by hand.
    await w.page.clock.install();
    await w.page.goto(link.url);
    await w.page.locator('.chart canvas').first().waitFor({ timeout: 15_000 });
    const expiry = w.page.getByTestId('expiry');
    await expect.poll(() => expiry.textContent()).toMatch(/\(in (1\d\d|2 min) ?s?\)/);
    await w.page.clock.runFor(60_000);
    await expect.poll(() => expiry.textContent()).toMatch(/\(in [5-6]\d s\)/);
    await w.page.clock.runFor(61_000);
    await expect.poll(() => expiry.textContent()).toContain('this token has ended');
    await w.context.close();
  });

  it('lets a partner find its own refused request by the id its error gave, with the reason', async () => {
    const made = await adminCall('/tenants', {
      name: 'Refused partner',
      platform_key: DEMO_PLATFORM_KEY,
    });
    const res = await fetch(`${gateway.url}/admin/tenants/${made.tenant_id}/limits`, {
      method: 'PUT',
      headers: {
        authorization: `Bearer ${gateway.adminToken}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        policies: [{ name: 'hourly', limit: 1, window_s: 3600, algorithm: 'fixed' }],
        quota: {},
        limiter: 'exact',
      }),
    });
    expect(res.status).toBe(200);
    expect((await asToken(made.token, '/agent/lists')).status).toBe(200);
    const refused = await asToken(made.token, '/agent/lists');
    expect(refused.status).toBe(429);
    const id = refused.body.data.request_id as string;
    // Its refusal reaches the guard with the next request's call (exact mode).
    await untilRecorded(gateway, made.tenant_id, id, () => asToken(made.token, '/agent/lists'));
    // Another refusal, newer, that the lookup must hide: the list shows it before.
    const other = (await asToken(made.token, '/agent/lists')).body.data.request_id as string;
    await untilRecorded(gateway, made.tenant_id, other, () => asToken(made.token, '/agent/lists'));

    // axe runs on this view too: this context may bypass the CSP to inject it.
    const w = await newTab({ bypassCSP: true });
    await signIn(w.page, made.token);
    const section = w.page.locator('section', { hasText: 'Refused and failed requests' });
    await section.getByTestId('failure-rows').waitFor();
    const otherRow = section.locator(`tr[data-request-id="${other}"]`);
    await otherRow.waitFor();
    await section.getByLabel(/Request id/).fill(id);
    // The list before the lookup may show the row too: wait for the lookup's answer.
    const answered = w.page.waitForResponse((r) => r.url().includes('request_id='));
    await section.getByRole('button', { name: 'Find' }).click();
    await answered;
    const row = section.locator(`tr[data-request-id="${id}"]`);
    await row.waitFor();
    await expect.poll(() => section.locator('tbody tr').count()).toBe(1);
    expect(await otherRow.count()).toBe(0);
    expect(await row.innerText()).toContain('Rate limit exceeded (policy hourly)');
    // Refusals by policy and by operation, for the 48 hours shown.
    await w.page
      .getByTestId('refusals-by-policy')
      .getByRole('rowheader', { name: 'hourly' })
      .waitFor();
    await w.page
      .getByTestId('refusals-by-operation')
      .getByRole('rowheader', { name: 'agent.list' })
      .waitFor();
    expect(await seriousViolations(w.page)).toEqual([]);
    expect(offLoopback(w)).toEqual([]);
    expect(await exposedText(w)).not.toContain(made.token);
    await w.context.close();
  });

  it('links into /docs signed in, without the token in the URL or localStorage', async () => {
    const w = await newTab();
    await signIn(w.page, a.token);
    await w.page.getByRole('link', { name: /Open the API reference/ }).click();
    await w.page.waitForURL((u) => u.pathname === '/docs');
    const tokenField = w.page.locator('input[placeholder="Token"]:visible').first();
    await tokenField.waitFor({ timeout: 30_000 });
    expect(await tokenField.inputValue()).toBe(a.token);
    // Scalar puts its own place in the fragment (#description/…); never the token.
    expect(w.page.url().startsWith(`${gateway.url}/docs`)).toBe(true);
    expect(w.page.url()).not.toContain(a.token);
    expect(w.requested.filter((u) => u.includes(a.token))).toEqual([]);
    const stored = await w.page.evaluate(() => Object.values(localStorage).join('\n'));
    expect(stored).not.toContain(a.token);
    expect((await w.context.cookies()).map((c) => c.value).join('\n')).not.toContain(a.token);
    expect(offLoopback(w)).toEqual([]);
    await w.context.close();
  });

  it('has no serious or critical accessibility violation (axe-core)', async () => {
    // axe is injected as a script: the test's own context may bypass the page's CSP.
    const w = await newTab({ bypassCSP: true });
    await w.page.goto(`${gateway.url}/portal/`);
    await w.page.getByLabel('Gateway token', { exact: true }).waitFor();
    const signInPage = await seriousViolations(w.page);
    await w.page.getByLabel('Gateway token', { exact: true }).fill('nope');
    await w.page.getByRole('button', { name: 'Open' }).click();
    await w.page.locator('#token-error', { hasText: 'apgw_' }).waitFor();
    const withError = await seriousViolations(w.page);
    await signIn(w.page, a.token);
    for (const summary of await w.page.locator('details summary').all()) await summary.click();
    const portal = await seriousViolations(w.page);
    console.log(
      `portal axe: sign-in ${signInPage.length}, error ${withError.length}, portal ${portal.length} serious/critical`,
    );
    expect({ signInPage, withError, portal }).toEqual({
      signInPage: [],
      withError: [],
      portal: [],
    });
    await w.context.close();
  });

  it('serves the page under its CSP, and keeps it working by keyboard alone', async () => {
    const res = await fetch(`${gateway.url}/portal/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    // Without the slash: on to the page, with a portal link's fragment kept by the browser.
    const bare = await fetch(`${gateway.url}/portal`, { redirect: 'manual' });
    expect([301, 302, 307, 308]).toContain(bare.status);
    expect(new URL(bare.headers.get('location') ?? '', gateway.url).pathname).toBe('/portal/');
    const w = await newTab();
    await w.page.goto(`${gateway.url}/portal/`);
    await w.page.getByLabel('Gateway token', { exact: true }).waitFor();
    await w.page.keyboard.press('Tab');
    expect(await w.page.evaluate(() => document.activeElement?.id)).toBe('token');
    await w.page.keyboard.type(a.token);
    await w.page.keyboard.press('Enter');
    await w.page.locator('.chart canvas').first().waitFor({ timeout: 15_000 });
    expect(await w.page.locator('main').innerText()).toContain(a.name);
    // The focus moves to what changed: the portal's first heading.
    expect(await w.page.evaluate(() => document.activeElement?.id)).toBe('token-title');
    // Everything to operate is reachable by Tab: Refresh, Sign out, the docs link, rotation.
    const reached = new Set<string>();
    for (let i = 0; i < 60; i++) {
      await w.page.keyboard.press('Tab');
      reached.add(
        await w.page.evaluate(() => {
          const el = document.activeElement as HTMLElement | null;
          return `${el?.tagName}:${el?.id || el?.textContent?.trim().slice(0, 40)}`;
        }),
      );
    }
    for (const control of [
      'BUTTON:Refresh',
      'BUTTON:Sign out',
      'A:Open the API reference',
      'INPUT:overlap',
      'BUTTON:Rotate my token',
    ]) {
      expect(
        [...reached].some((r) => r.startsWith(control)),
        control,
      ).toBe(true);
    }
    await w.context.close();
  });
});
