/**
 * The operator console (/console/) in real Chromium (Debian's, driven by
 * playwright-core), served by the built Worker on plain workerd, signed in
 * through the local Cloudflare Access stand-in (scripts/local-access.ts), whose
 * JWTs the gateway verifies with its production code. An operator's whole flow
 * by hand; a viewer who can change nothing; no request off loopback; no secret
 * left behind; axe-core on every view.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PLATFORM_KEY, DEMO_SECOND_KEY } from '../../emulator/seed';
import { type RunningEmulator, startEmulator } from '../../emulator/server';
import { freePort } from '../../scripts/free-port';
import {
  LOCAL_ADMIN_EMAIL,
  LOCAL_VIEWER_EMAIL,
  type LocalAccess,
  startLocalAccess,
} from '../../scripts/local-access';
import { type GatewayHost, startGateway } from '../../scripts/workerd-host';
import { untilRecorded } from './recorded';

// Evaluated through the DevTools protocol: the page's CSP (rightly) refuses an inline script tag.
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

let emulator: RunningEmulator;
let access: LocalAccess;
let gateway: GatewayHost;
let browser: Browser;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
  access = await startLocalAccess();
  gateway = await startGateway({
    platformBaseUrl: emulator.url,
    // Also the console Worker on its own socket, as on the console's own hostname.
    console: true,
    vars: {
      ...access.vars,
      WEBHOOK_LOCAL_TARGETS: 'allow',
    },
  });
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gateway?.stop();
  await access?.close();
  await emulator?.close();
});

interface Session {
  context: BrowserContext;
  page: Page;
  /** Every URL the page asked for. */
  requested: string[];
  /** Every line the page printed to its console, and every page error. */
  printed: string[];
}

/**
 * Signs in through the local Access login as `role` and lands on the console, on its
 * tenant list (`view`; the console's first page is the overview).
 */
async function signIn(
  role: 'admin' | 'viewer',
  origin = gateway.url,
  view = '#tenants',
): Promise<Session> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const requested: string[] = [];
  const printed: string[] = [];
  page.on('request', (r) => requested.push(r.url()));
  page.on('console', (m) => printed.push(`${m.type()}: ${m.text()}`));
  page.on('pageerror', (e) => printed.push(`pageerror: ${e.message}`));
  await page.goto(access.loginUrl(role, `${origin}/console/${view}`));
  const email = role === 'admin' ? LOCAL_ADMIN_EMAIL : LOCAL_VIEWER_EMAIL;
  await page.getByTestId('whoami').getByText(email).waitFor();
  return { context, page, requested, printed };
}

/** axe-core in the page: serious and critical violations, by rule and where. */
async function axeProblems(page: Page, view: string): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE);
  const found = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document) => Promise<AxeResult> } }).axe;
    const result = await axe.run(document);
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
  return found.map((f) => `${view}: ${f}`);
}
interface AxeResult {
  violations: { id: string; impact: string | null; nodes: { target: string[] }[] }[];
}

/** Everything a page keeps where a secret must not be: DOM, field values, storage, URL. */
async function pageText(page: Page): Promise<string> {
  return page.evaluate(() => {
    const values = Array.from(document.querySelectorAll('input, textarea')).map(
      (el) => (el as HTMLInputElement).value,
    );
    const storage = (s: Storage) =>
      Object.keys(s)
        .map((k) => `${k}=${s.getItem(k)}`)
        .join('\n');
    return [
      document.documentElement.outerHTML,
      values.join('\n'),
      storage(localStorage),
      storage(sessionStorage),
      location.href,
      document.cookie,
    ].join('\n');
  });
}

const openTab = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Tenant sections' }).getByRole('button', { name }).click();

/** The names of the controls that change something (what a viewer must not be shown). */
const CHANGING =
  /^(Create tenant|Create anyway|Create a partner portal link|Issue token|Rotate|Revoke|Limits of|Disable tenant|Enable tenant|Delete tenant|Save limits|Reset to defaults|Return to the plan|Save webhook|Send a test alert|Remove webhook|Purge cache|Add a policy|Add group quota|Save settings|Check key|Check the|Change plan|Create plan|Edit |Remove )/;
interface Controls {
  buttons: string[];
  forms: number;
}
/** The buttons that change something, and the forms (the recent requests' filter only reads). */
async function changingControls(page: Page): Promise<Controls> {
  const names = await page.getByRole('button').allInnerTexts();
  return {
    buttons: names.filter((b) => CHANGING.test(b.trim())),
    forms: await page.locator('form:not([aria-label="Find requests"])').count(),
  };
}
/** The changing controls of each of an open tenant's tabs, once each tab has loaded. */
async function controlsByTab(page: Page): Promise<Record<string, Controls>> {
  const found: Record<string, Controls> = {};
  for (const tab of ['Tokens', 'Limits', 'Usage', 'Requests', 'Alerts and cache', 'Settings']) {
    await openTab(page, tab);
    await page.getByRole('heading', { level: 2 }).first().waitFor();
    await page.waitForLoadState('networkidle');
    found[tab] = await changingControls(page);
  }
  return found;
}

/** Calls the gateway as a partner would, with a gateway token. */
let partnerCalls = 0;
const asPartner = (token: string, p = '/team/lists') => {
  partnerCalls++;
  return fetch(`${gateway.url}${p}`, { headers: { authorization: `Bearer ${token}` } });
};

describe('the console in Chromium', () => {
  it('names the same scopes and presets where it lists them as where it refuses others', async () => {
    const admin = { authorization: `Bearer ${gateway.adminToken}` };
    const listed = (await (
      await fetch(`${gateway.url}/admin/operations`, { headers: admin })
    ).json()) as {
      data: { scopes: string[]; presets: string[] };
    };
    // The gateway names what it allows when it refuses an unknown scope.
    const made = await fetch(`${gateway.url}/admin/tenants`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'scopes',
        platform_key: DEMO_PLATFORM_KEY,
        token: { name: 'x', scopes: ['no-such-scope'] },
      }),
    });
    const body = (await made.json()) as { data: { errors: { allowed: string[] }[] } };
    expect([...listed.data.presets, ...listed.data.scopes].sort()).toEqual(
      [...(body.data.errors[0]?.allowed ?? [])].sort(),
    );
    expect(listed.data.scopes).toContain('products:read');
  });

  it('serves the page under a strict Content-Security-Policy', async () => {
    const res = await fetch(`${gateway.url}/console/`);
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it("runs an operator's whole flow, leaves no secret behind and asks only loopback", async () => {
    const { page, context, requested, printed } = await signIn('admin');
    const problems: string[] = [];
    problems.push(...(await axeProblems(page, 'tenants')));

    // A field the browser refuses shows its error beside the field, before any request.
    await page.getByRole('button', { name: 'Create tenant' }).click();
    await expect.poll(() => page.locator('#new-name-error').textContent()).toContain('name');
    // What the browser lets through and the API refuses: the API's message lands next to
    // the field it names (a zero-width space in the name).
    await page.locator('#new-name').fill('Zero\u200bwidth');
    await page.getByLabel('Platform key').fill(DEMO_PLATFORM_KEY);
    const refusedCreate = page.waitForResponse(
      (r) => r.request().method() === 'POST' && r.url().endsWith('/admin/tenants'),
    );
    await page.getByRole('button', { name: 'Create tenant' }).click();
    expect((await refusedCreate).status()).toBe(400);
    await expect
      .poll(() => page.locator('#new-name-error').textContent())
      .toBe('name must not contain control characters or format characters (bidi, zero-width)');
    expect(await page.locator('#new-name').getAttribute('aria-invalid')).toBe('true');
    // The browser's own check of another field, before any request.
    const name = `Console ${Date.now()}`;
    await page.locator('#new-name').fill(name);
    await page.getByLabel('Browser origins (optional)').fill('https://ok.example.com/path');
    await page.getByRole('button', { name: 'Create tenant' }).click();
    await expect.poll(() => page.locator('#new-origins-error').textContent()).toMatch(/origin/);
    await page.getByLabel('Browser origins (optional)').fill('');

    await page.getByRole('button', { name: 'Create tenant' }).click();
    const firstToken = (await page.locator('[data-secret]').textContent()) ?? '';
    expect(firstToken).toMatch(/^apgw_/);
    problems.push(...(await axeProblems(page, 'token shown once')));
    await page.getByRole('button', { name: 'Done, hide it' }).click();
    await page.getByRole('heading', { level: 1, name }).waitFor();
    const tenantId = (await page.locator('dl.facts code').first().textContent()) ?? '';
    expect(tenantId).toMatch(/^ten_/);
    // Only the key's fingerprint is shown.
    await expect
      .poll(() => page.locator('dl.facts code').nth(1).textContent())
      .toMatch(/^[0-9a-f]{16}$/);

    // The view is in the URL's fragment (an id, never a secret): a reload lands on it again.
    expect(new URL(page.url()).hash).toBe(`#tenant/${tenantId}`);
    await page.reload();
    await page.getByRole('heading', { level: 1, name }).waitFor();

    // Tokens: the picker preselects `full`, never an apikeys scope, and warns on one.
    await openTab(page, 'Tokens');
    await page.getByTestId('token-rows').locator('tr').first().waitFor();
    expect(await page.getByRole('checkbox', { name: 'full (preset)' }).isChecked()).toBe(true);
    // It offers what the gateway grants today (GET /admin/operations), new groups included.
    const offered = await page
      .locator('input[name="scopes"]')
      .evaluateAll((boxes) => boxes.map((b) => (b as HTMLInputElement).value));
    const granted = (await (
      await fetch(`${gateway.url}/admin/operations`, {
        headers: { authorization: `Bearer ${gateway.adminToken}` },
      })
    ).json()) as { data: { scopes: string[]; presets: string[] } };
    expect(offered).toEqual([...granted.data.presets, ...granted.data.scopes]);
    for (const box of await page.getByRole('checkbox', { name: /^apikeys:/ }).all()) {
      expect(await box.isChecked()).toBe(false);
    }
    await page.getByRole('checkbox', { name: 'apikeys:admin' }).check();
    await page.getByText(/apikeys:admin reaches the platform's own API keys/).waitFor();
    await page.getByRole('checkbox', { name: 'apikeys:admin' }).uncheck();
    await page.locator('#token-name').fill('ci');
    await page.getByLabel('Expiry').selectOption('In 30 days');
    // Each own-limit field says its own error, in its own place (they once shared one).
    await page.locator('#token-rate').fill('x');
    await page.locator('#token-daily').fill('5');
    await page.getByRole('button', { name: 'Issue token' }).click();
    await page.locator('#token-rate-error', { hasText: 'per minute' }).waitFor();
    expect(await page.locator('#token-daily-error').count()).toBe(0);
    await page.locator('#token-rate').fill('');
    await page.locator('#token-daily').fill('y');
    await page.getByRole('button', { name: 'Issue token' }).click();
    await page.locator('#token-daily-error', { hasText: 'daily quota' }).waitFor();
    expect(await page.locator('#token-rate-error').count()).toBe(0);
    await page.locator('#token-daily').fill('');
    await page.getByRole('button', { name: 'Issue token' }).click();
    const token = (await page.locator('[data-secret]').textContent()) ?? '';
    expect(token).toMatch(/^apgw_/);
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByRole('button', { name: 'Done, hide it' }).click();
    await expect.poll(() => page.getByTestId('token-rows').locator('tr').count()).toBe(2);
    // The token's own limits, in a dialog; a bad number is refused beside its field.
    await page.getByRole('button', { name: `Limits of ci ${token.slice(-4)}` }).click();
    const limitsDialog = page.getByRole('dialog', { name: 'Own limits of ci' });
    await limitsDialog.getByLabel('Requests per minute').fill('0');
    await limitsDialog.getByRole('button', { name: 'Save limits' }).click();
    await limitsDialog.getByText('A whole number from 1, or empty').waitFor();
    // Still modal after the error: the page behind is inert, Escape closes it, and a
    // reopened dialog starts from what is saved, not from the refused value.
    await expect
      .poll(() => page.evaluate(() => document.querySelector('dialog:modal') !== null))
      .toBe(true);
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    await page.getByRole('button', { name: `Limits of ci ${token.slice(-4)}` }).click();
    expect(await limitsDialog.getByLabel('Requests per minute').inputValue()).toBe('');
    await limitsDialog.getByLabel('Requests per minute').fill('0');
    await limitsDialog.getByRole('button', { name: 'Save limits' }).click();
    await limitsDialog.getByText('A whole number from 1, or empty').waitFor();
    await limitsDialog.getByRole('button', { name: 'Cancel' }).click();
    await page.getByRole('button', { name: `Limits of ci ${token.slice(-4)}` }).click();
    expect(await limitsDialog.getByLabel('Requests per minute').inputValue()).toBe('');
    await limitsDialog.getByLabel('Requests per minute').fill('100');
    await limitsDialog.getByRole('button', { name: 'Save limits' }).click();
    await page.getByText('Limits of ci saved.').waitFor();
    await page.getByText('100 per 60 s').waitFor();
    // Rotating the first token shows its successor once; the old one works for an hour.
    await page.getByRole('button', { name: `Rotate default ${firstToken.slice(-4)}` }).click();
    // The overlap is chosen, as the API allows (0 s..30 days), not fixed at an hour.
    const overlap = page.getByRole('dialog').getByLabel('The old token keeps working for');
    await overlap.waitFor();
    expect(await overlap.locator('option').allInnerTexts()).toEqual([
      'end it now',
      '5 minutes',
      '1 hour',
      '1 day',
      '7 days',
      '30 days',
    ]);
    await page
      .getByRole('dialog')
      .getByLabel('The old token keeps working for')
      .selectOption('1 day');
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate' }).click();
    const rotated = (await page.locator('[data-secret]').textContent()) ?? '';
    expect(rotated).toMatch(/^apgw_/);
    expect(rotated).not.toBe(firstToken);
    await page.getByRole('button', { name: 'Done, hide it' }).click();
    await expect.poll(() => page.getByTestId('token-rows').locator('tr').count()).toBe(3);
    expect((await asPartner(rotated)).status).toBe(200);
    // A partner portal link: its URL carries a new usage:read token, so it shows once too.
    await page.getByLabel('Partner portal link, valid for').selectOption('30 minutes');
    await page.getByRole('button', { name: 'Create a partner portal link' }).click();
    const portalUrl = (await page.locator('[data-secret]').textContent()) ?? '';
    expect(portalUrl).toMatch(new RegExp(`^${gateway.url}/portal/?#token=apgw_`));
    const portalToken = portalUrl.slice(portalUrl.indexOf('#token=') + 7);
    expect((await asPartner(portalToken, '/usage')).status).toBe(200);
    await page.getByRole('button', { name: 'Done, hide it' }).click();
    await expect.poll(() => page.getByTestId('token-rows').locator('tr').count()).toBe(4);
    problems.push(...(await axeProblems(page, 'tokens')));

    // Limits: exact mode (every request counted at once), a daily quota, what remains now.
    await openTab(page, 'Limits');
    await page.getByLabel('Requests a day').fill('abc');
    await page.getByRole('button', { name: 'Save limits' }).click();
    await page.locator('#tenant-limits-quota-daily-error').waitFor();
    await page.getByLabel('Requests a day').fill('500');
    await page.getByRole('radio', { name: /^exact/ }).check();
    await page.getByRole('button', { name: 'Save limits' }).click();
    await page.getByText('Limits saved').waitFor();
    await page.getByText('This tenant has its own limits.').waitFor();
    // The mode is said right: leased never admits over a limit (README, docs/LIMITS.md).
    expect(await page.locator('main').innerText()).not.toMatch(/overshoot/i);
    await page.getByText(/leased: isolates admit from short leases; never over a limit/).waitFor();
    problems.push(...(await axeProblems(page, 'limits')));

    // Requests with the token show in the chart. A request's usage rides on the
    // isolate's next call to the tenant's guard (exact mode: the next request), so of
    // the tenant's requests so far all but the last are in the history at once.
    for (let i = 0; i < 6; i++) expect((await asPartner(token)).status).toBe(200);
    const sent = partnerCalls;
    await openTab(page, 'Usage');
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Refresh' }).click();
          return page.getByTestId('usage-totals').textContent({ timeout: 5000 });
        },
        { timeout: 60_000, interval: 1000 },
      )
      .toMatch(new RegExp(`^(${sent - 1}|${sent}) requests`));
    await page.getByRole('combobox', { name: 'Requests by' }).selectOption('token');
    await page.locator('section[data-drawn="24 h|hour|token"]').waitFor();
    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download CSV' }).click();
    const csv = await (await download).createReadStream();
    let csvText = '';
    for await (const chunk of csv) csvText += chunk;
    expect(csvText.split('\n')[0]).toBe(
      't,token,requests,units,p50_ms,p95_ms,cache_hits,cache_lookups,billable,self_service',
    );
    // The partner's reads are of a cached operation: they looked in the read cache, and the
    // page draws the hit ratio.
    const lookups = csvText
      .trim()
      .split('\n')
      .slice(1)
      .reduce((sum, line) => sum + Number(line.split(',')[7] ?? 0), 0);
    expect(lookups).toBeGreaterThan(0);
    await page.getByText('Cache hit ratio (reads of cached operations)').waitFor();
    problems.push(...(await axeProblems(page, 'usage')));

    // What remains of the token's own limits (exact mode: its 6 requests counted at once).
    await openTab(page, 'Limits');
    await page
      .getByLabel('Also the own limits of')
      .selectOption({ label: `ci …${token.slice(-4)}` });
    const ownRow = page.getByTestId('meters').getByRole('row', { name: /per-minute-token/ });
    await expect.poll(() => ownRow.innerText()).toMatch(/\t100\t60 s\t6\t/);
    // Times are words, as the portal says them ("21 h"), never a raw "74313 s".
    expect(await page.getByTestId('meters').innerText()).not.toMatch(/\d{4,} s\b/);
    expect(await page.getByTestId('meters').innerText()).toMatch(/\t(\d+ (s|min|h)|\d+ days)$/m);

    // Alerts: the webhook, its secret once, and a test alert the emulator receives.
    await openTab(page, 'Alerts and cache');
    // This gateway allows local targets: the page says production refuses them.
    await page.getByTestId('local-targets').waitFor();
    // A receiver nothing listens on: the test alert says the connection failed, at once,
    // not "no answer in 10 s".
    await page.getByLabel('Webhook URL').fill(`http://127.0.0.1:${await freePort()}/hook`);
    await page.getByRole('button', { name: 'Save webhook' }).click();
    await page.locator('[data-secret]').waitFor();
    await page.getByRole('button', { name: 'Done, hide it' }).click();
    const clicked = Date.now();
    await page.getByRole('button', { name: 'Send a test alert' }).click();
    await page.getByText(/could not be reached \(no connection, after \d+ ms\)/).waitFor();
    expect(Date.now() - clicked).toBeLessThan(9000);
    expect(await page.locator('main').innerText()).not.toContain('no answer');
    await page.getByLabel('Webhook URL').fill('not a url');
    await page.getByRole('button', { name: 'Save webhook' }).click();
    await page.locator('#alert-url-error').waitFor();
    const hook = `console-${Date.now()}`;
    await page.getByLabel('Webhook URL').fill(`${emulator.url}/__emulator/webhooks/${hook}`);
    await page.getByRole('button', { name: 'Save webhook' }).click();
    const webhookSecret = (await page.locator('[data-secret]').textContent()) ?? '';
    expect(webhookSecret).toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'Done, hide it' }).click();
    await page.getByRole('button', { name: 'Send a test alert' }).click();
    await page.getByText('Test alert delivered (HTTP 200).').waitFor();
    const deliveries = (await (
      await fetch(`${emulator.url}/__emulator/webhooks/${hook}`)
    ).json()) as { body: string }[];
    expect(deliveries.map((d) => JSON.parse(d.body).test)).toEqual([true]);
    await page.getByRole('button', { name: 'Purge cache' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Purge' }).click();
    await page.getByText(/Cache purged for 1 tenant/).waitFor();
    problems.push(...(await axeProblems(page, 'alerts')));

    // Revoke the token: the next request with it is refused.
    await openTab(page, 'Tokens');
    await page.getByRole('button', { name: new RegExp(`^Revoke ci ${token.slice(-4)}$`) }).click();
    problems.push(...(await axeProblems(page, 'confirm dialog')));
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke' }).click();
    await page.getByText(/revoked\.$/).waitFor();
    const refused = await asPartner(token);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { code: number }).code).toBe(40102);

    // Settings: a new platform key, typed once; the fingerprint changes, the key never shows.
    const fingerprint = await page.locator('dl.facts code').nth(1).textContent();
    await openTab(page, 'Settings');
    await page.getByLabel(/^New platform key/).fill('has space');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.locator('#edit-key-error').waitFor();
    await page.getByLabel(/^New platform key/).fill(DEMO_SECOND_KEY);
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Saved, with the new platform key.').waitFor();
    await expect
      .poll(() => page.locator('dl.facts code').nth(1).textContent())
      .not.toBe(fingerprint);
    expect(await page.getByLabel(/^New platform key/).inputValue()).toBe('');
    problems.push(...(await axeProblems(page, 'settings')));

    // Disable (asked first; Escape cancels), and every token is refused; enable again.
    await page.getByRole('button', { name: 'Disable tenant' }).click();
    await page.getByRole('dialog', { name: /^Disable / }).waitFor();
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    expect((await asPartner(rotated)).status).toBe(200);
    await page.getByRole('button', { name: 'Disable tenant' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Disable' }).click();
    await page.locator('dl.facts .status-disabled').waitFor();
    const disabled = await asPartner(rotated);
    expect(disabled.status).toBe(403);
    expect(((await disabled.json()) as { code: number }).code).toBe(40302);
    await page.getByRole('button', { name: 'Enable tenant' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Enable' }).click();
    await page.locator('dl.facts .status-active').waitFor();
    expect((await asPartner(rotated)).status).toBe(200);

    // The audit log names the operator for each change.
    await page.getByRole('button', { name: 'Audit log of this tenant' }).click();
    expect(await page.getByLabel('Tenant id').inputValue()).toBe(tenantId);
    expect(new URL(page.url()).hash).toBe(`#audit/${tenantId}`);
    await page.getByLabel('Operator (email or admin-token)').fill(LOCAL_ADMIN_EMAIL);
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect
      .poll(async () => (await page.getByTestId('audit-rows').innerText()).split('\n').length, {
        timeout: 10_000,
      })
      .toBeGreaterThanOrEqual(7);
    const audit = await page.getByTestId('audit-rows').innerText();
    for (const action of [
      'tenant.created',
      'token.issued',
      'limits.set',
      'alerts.set',
      'alerts.tested',
      'cache.purged',
      'token.revoked',
      'token.rotated',
      'token.limits_set',
      'tenant.disabled',
      'tenant.enabled',
      'tenant.updated',
    ]) {
      expect(audit).toContain(action);
    }
    expect(audit).toContain(LOCAL_ADMIN_EMAIL);
    await page.getByLabel('Action or prefix').fill('Token.');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.locator('#audit-action-error').waitFor();
    await page.getByLabel('Action or prefix').fill('token.');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect
      .poll(async () => (await page.getByTestId('audit-rows').innerText()).includes('limits.set'))
      .toBe(false);
    problems.push(...(await axeProblems(page, 'audit')));

    // Delete: the tenant's name must be typed; then it is gone from the list.
    await page.getByRole('button', { name: 'Tenants' }).click();
    await page.getByLabel('Search by name or id').fill(tenantId);
    await page.getByRole('button', { name }).click();
    await page.getByRole('button', { name: 'Delete tenant' }).click();
    const deleting = page.getByRole('dialog', { name: `Delete ${name}?` });
    await deleting.getByLabel(`Type ${name} to confirm`).fill('not it');
    await deleting.getByRole('button', { name: 'Delete for good' }).click();
    await deleting.getByText(`Type ${name} to confirm`, { exact: true }).last().waitFor();
    await deleting.getByLabel(`Type ${name} to confirm`).fill(name);
    await deleting.getByRole('button', { name: 'Delete for good' }).click();
    await page.getByRole('heading', { level: 1, name: 'Tenants' }).waitFor();
    await page.getByLabel('Search by name or id').fill(tenantId);
    await page.getByText('No tenant on this page.').waitFor();
    expect((await asPartner(rotated)).status).toBe(401);

    // No secret stays anywhere the page keeps things, nor in what it printed.
    const kept = `${await pageText(page)}\n${printed.join('\n')}`;
    for (const secret of [
      DEMO_PLATFORM_KEY,
      DEMO_SECOND_KEY,
      firstToken,
      token,
      rotated,
      webhookSecret,
    ]) {
      expect(kept).not.toContain(secret);
    }
    for (const url of requested) expect(url).not.toContain(token);
    // Every request went to loopback: the gateway, and the local Access sign-in.
    const elsewhere = requested.filter(
      (u) => !/^http:\/\/127\.0\.0\.1:\d+\//.test(u) && !/^(data|blob):/.test(u),
    );
    expect(elsewhere).toEqual([]);
    expect(printed.filter((line) => /Content Security Policy|pageerror/i.test(line))).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  }, 180_000);

  it('plans, families, key checks and the overview, by hand, with axe on each view', async () => {
    const { page, context, printed, requested } = await signIn('admin');
    const problems: string[] = [];
    const admin = {
      authorization: `Bearer ${gateway.adminToken}`,
      'content-type': 'application/json',
    };

    // A made-up key: the platform refuses it, the form says so and asks for a deliberate second
    // click; the key never shows.
    const madeUp = `sk-made-up-${Date.now()}0000`;
    const name = `Families ${Date.now()}`;
    await page.locator('#new-name').fill(name);
    await page.getByLabel('Platform key').fill(madeUp);
    await page.getByRole('button', { name: 'Create tenant' }).click();
    await page
      .getByTestId('key-check')
      .getByText('The platform refused this key (HTTP 401)')
      .waitFor();
    problems.push(...(await axeProblems(page, 'key refused')));
    await page.getByLabel('Platform key').fill(DEMO_PLATFORM_KEY);
    await page.getByRole('button', { name: 'Check key' }).click();
    await page.getByTestId('key-check').getByText('The platform accepted this key').waitFor();
    await page.getByRole('button', { name: 'Create tenant' }).click();
    const first = (await page.locator('[data-secret]').textContent()) ?? '';
    await page.getByRole('button', { name: 'Done, hide it' }).click();
    await page.getByRole('heading', { level: 1, name }).waitFor();
    const tenantId = (await page.locator('dl.facts code').first().textContent()) ?? '';

    // The same name and key again: refused, naming the first, with a way to it.
    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('button', { name: 'Tenants' })
      .click();
    await page.locator('#new-name').fill(name.toUpperCase());
    await page.getByLabel('Platform key').fill(DEMO_PLATFORM_KEY);
    await page.getByRole('button', { name: 'Create tenant' }).click();
    await page.getByText(`exists already: ${tenantId}`).waitFor();
    await page.getByRole('button', { name: `Open the existing tenant ${tenantId}` }).click();
    await page.getByRole('heading', { level: 1, name }).waitFor();

    // Settings: check the stored key, without showing it.
    await openTab(page, 'Settings');
    await page.getByRole('button', { name: 'Check the current key' }).click();
    await page.getByTestId('key-check').getByText('The platform accepted this key').waitFor();

    // A family: rotate, rotate again, then revoke the first with its successors. All three
    // stay listed, as revoked, together; each says when it was last used.
    await openTab(page, 'Tokens');
    const rows = page.getByTestId('token-rows').locator('tr');
    await rows.first().waitFor();
    const listed = async () =>
      (
        (await (
          await fetch(`${gateway.url}/admin/tenants/${tenantId}/tokens`, { headers: admin })
        ).json()) as { data: { tokens: { id: string; last4: string; revoked_at?: string }[] } }
      ).data.tokens;
    await page.getByRole('button', { name: `Rotate default ${first.slice(-4)}` }).click();
    await page
      .getByRole('dialog')
      .getByLabel('The old token keeps working for')
      .selectOption('end it now');
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate' }).click();
    const second = (await page.locator('[data-secret]').textContent()) ?? '';
    await page.getByRole('button', { name: 'Done, hide it' }).click();
    await expect.poll(() => rows.count()).toBe(2);
    await page.getByRole('button', { name: `Rotate default ${second.slice(-4)}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate' }).click();
    await page.locator('[data-secret]').waitFor();
    await page.getByRole('button', { name: 'Done, hide it' }).click();
    await expect.poll(() => rows.count()).toBe(3);
    const ids = (await listed()).map((t) => t.id);
    await page
      .getByRole('button', { name: `Revoke default ${second.slice(-4)} and its successors` })
      .click();
    await page.getByRole('dialog').getByRole('button', { name: 'Revoke all' }).click();
    await page.getByText(/and 1 successor revoked/).waitFor();
    await expect
      .poll(async () => (await rows.allInnerTexts()).filter((r) => r.includes('revoked')).length)
      .toBe(2);
    expect(await rows.count()).toBe(3);
    for (const id of ids) {
      expect(await page.locator(`tr[data-token-id="${id}"]`).getAttribute('data-family-id')).toBe(
        ids[0],
      );
    }
    expect(await page.getByTestId('last-used').first().textContent()).toMatch(
      /not in the history|UTC/,
    );
    problems.push(...(await axeProblems(page, 'families')));

    // A plan: made here, the tenant put on it, changed: the tenant and another on it are
    // refused at the new limit.
    const plan = `console-${Date.now().toString(36)}`;
    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('button', { name: 'Plans' })
      .click();
    await page.locator('#new-plan-name').fill(plan);
    await page.locator('#new-plan-p0-limit').fill('1000');
    await page.locator('#new-plan-p0-window').fill('3600');
    await page.locator('#new-plan-p0-alg').selectOption('fixed');
    await page.getByRole('radio', { name: /^exact/ }).check();
    // An operation-group quota is editable too.
    await page.locator('#new-plan-add-group').selectOption('sessions');
    await page.getByRole('button', { name: 'Add group quota' }).click();
    await page.getByLabel('sessions: a day').fill('50');
    await page.getByRole('button', { name: 'Create plan' }).click();
    await page.getByText(`Plan ${plan} saved: 0 tenants on it`).waitFor();
    problems.push(...(await axeProblems(page, 'plans')));
    const other = (await (
      await fetch(`${gateway.url}/admin/tenants`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ name: `On ${plan}`, platform_key: DEMO_SECOND_KEY, plan }),
      })
    ).json()) as { data: { token: string } };
    await page.goto(`${gateway.url}/console/#tenant/${tenantId}`);
    await openTab(page, 'Limits');
    await page.getByLabel('Plan', { exact: true }).selectOption(plan);
    await page.getByRole('button', { name: 'Change plan' }).click();
    await page.getByText(`Now on plan ${plan}.`).waitFor();
    await page.getByTestId('limits-source').getByText(`the limits of its plan, ${plan}`).waitFor();
    expect(await page.getByTestId('tenant-plan').textContent()).toBe(plan);
    problems.push(...(await axeProblems(page, 'limits with a plan')));
    const live = (await listed()).find((t) => !t.revoked_at);
    const issued = (await (
      await fetch(`${gateway.url}/admin/tenants/${tenantId}/tokens`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ name: 'planned' }),
      })
    ).json()) as { data: { token: string } };
    expect(live).toBeDefined();
    for (const t of [issued.data.token, other.data.token])
      expect((await asPartner(t)).status).toBe(200);
    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('button', { name: 'Plans' })
      .click();
    await page.getByRole('button', { name: `Edit ${plan}` }).click();
    await page.locator(`#plan-${plan}-p0-limit`).fill('1');
    await page.getByRole('button', { name: `Save ${plan} for its 2 tenants` }).click();
    await page.getByText(`Plan ${plan} saved: 2 tenants on it, each has it now.`).waitFor();
    for (const t of [issued.data.token, other.data.token]) {
      const refused = await asPartner(t);
      expect(refused.status).toBe(429);
      expect(((await refused.json()) as { data: { policy: string } }).data.policy).toBe('burst');
    }

    // The overview: a tenant whose platform key the platform refuses shows up (its guard
    // reports within a minute of its first requests), and can be opened from there.
    const failing = (await (
      await fetch(`${gateway.url}/admin/tenants`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ name: `Failing key ${Date.now()}`, platform_key: madeUp }),
      })
    ).json()) as { data: { tenant_id: string; token: string } };
    for (let i = 0; i < 3; i++) expect((await asPartner(failing.data.token)).status).toBe(502);
    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('button', { name: 'Overview' })
      .click();
    const failingRow = page.getByTestId('key-failures').getByRole('row', { name: /Failing key/ });
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Refresh' }).click();
          return failingRow.count();
        },
        { timeout: 90_000, interval: 2000 },
      )
      .toBe(1);
    expect(await failingRow.innerText()).toMatch(/\t[1-3]\tHTTP 401\t/);
    problems.push(...(await axeProblems(page, 'overview')));
    await failingRow.getByRole('button').click();
    await page.getByTestId('key-alert').getByText('The platform refused the tenant').waitFor();
    await openTab(page, 'Alerts and cache');
    await page.getByTestId('recent-alerts').getByText('no webhook set').waitFor();
    problems.push(...(await axeProblems(page, 'alerts')));

    const kept = `${await pageText(page)}\n${printed.join('\n')}`;
    for (const secret of [madeUp, DEMO_PLATFORM_KEY, DEMO_SECOND_KEY, first, second]) {
      expect(kept).not.toContain(secret);
    }
    for (const url of requested) expect(url).not.toContain(madeUp);
    expect(printed.filter((line) => /Content Security Policy|pageerror/i.test(line))).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  }, 240_000);

  it('finds a refused request by its id in the Requests tab', async () => {
    const admin = {
      authorization: `Bearer ${gateway.adminToken}`,
      'content-type': 'application/json',
    };
    const made = (await (
      await fetch(`${gateway.url}/admin/tenants`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ name: `Looked up ${Date.now()}`, platform_key: DEMO_PLATFORM_KEY }),
      })
    ).json()) as { data: { tenant_id: string; token: string } };
    const { tenant_id: tenantId, token } = made.data;
    // Exact mode: each request's guard call carries the ones before it.
    await fetch(`${gateway.url}/admin/tenants/${tenantId}/limits`, {
      method: 'PUT',
      headers: admin,
      body: JSON.stringify({
        policies: [{ name: 'hourly', limit: 1, window_s: 3600, algorithm: 'fixed' }],
        quota: {},
        limiter: 'exact',
      }),
    });
    expect((await asPartner(token, '/agent/lists')).status).toBe(200);
    const refused = await asPartner(token, '/agent/lists');
    expect(refused.status).toBe(429);
    const refusedId = ((await refused.json()) as { data: { request_id: string } }).data.request_id;
    await untilRecorded(gateway, tenantId, refusedId, () => asPartner(token, '/agent/lists'));
    // Another refusal, newer, that the lookup must hide: the list shows it before.
    const other = await asPartner(token, '/agent/lists');
    const otherId = ((await other.json()) as { data: { request_id: string } }).data.request_id;
    await untilRecorded(gateway, tenantId, otherId, () => asPartner(token, '/agent/lists'));

    const { page, context, printed, requested } = await signIn(
      'admin',
      gateway.url,
      `#tenant/${tenantId}`,
    );
    await openTab(page, 'Requests');
    await page.getByTestId('request-rows').waitFor();
    const otherRow = page.locator(`tr[data-request-id="${otherId}"]`);
    await otherRow.waitFor();
    await page.getByLabel('Request id').fill(refusedId);
    const answered = page.waitForResponse((r) => r.url().includes('request_id='));
    await page.getByRole('button', { name: 'Find' }).click();
    await answered;
    const row = page.locator(`tr[data-request-id="${refusedId}"]`);
    await row.waitFor();
    // The answer is in; its rendering may still be under way (as in portal-browser).
    await expect.poll(() => page.getByTestId('request-rows').locator('tbody tr').count()).toBe(1);
    expect(await otherRow.count()).toBe(0);
    const text = await row.innerText();
    expect(text).toContain('GET agent.list');
    expect(text).toContain('429');
    expect(text).toContain('42900');
    expect(text).toContain('Rate limit exceeded (policy hourly)');
    expect(text).toContain('refused: hourly');
    // A bad filter is refused beside its field, before any request. The recorder saw the
    // lookup above (its query included), so a lookup sent now would show.
    const lookups = () =>
      requested.filter((u) => new URL(u).pathname === `/admin/tenants/${tenantId}/requests`);
    expect(lookups().some((u) => u.includes(`request_id=${refusedId}`))).toBe(true);
    const looked = lookups().length;
    await page.getByLabel('Status').fill('42');
    await page.getByRole('button', { name: 'Find' }).click();
    await page.locator('#rq-status-error').waitFor();
    expect(lookups()).toHaveLength(looked);
    // Requests are recorded as the page sends them, in order: once a valid Find's lookup is
    // in, one the bad filter had sent would be too (and carry its status).
    await page.getByLabel('Status').fill('');
    await page.getByRole('button', { name: 'Find' }).click();
    await expect.poll(() => lookups().length).toBeGreaterThan(looked);
    expect(lookups().filter((u) => new URL(u).searchParams.get('status') === '42')).toEqual([]);
    const problems = await axeProblems(page, 'requests');
    expect(await pageText(page)).not.toContain(token);
    expect(printed.filter((l) => /pageerror|Content Security Policy/i.test(l))).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  }, 120_000);

  it('shows a viewer everything and no control that changes anything; the API refuses one', async () => {
    // A tenant to look at, made with the admin token.
    const made = await fetch(`${gateway.url}/admin/tenants`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${gateway.adminToken}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ name: `Viewed ${Date.now()}`, platform_key: DEMO_PLATFORM_KEY }),
    });
    const { tenant_id: tenantId, token } = (
      (await made.json()) as {
        data: { tenant_id: string; token: string };
      }
    ).data;

    const { page, context, printed } = await signIn('viewer');
    await page.getByText('(read only)').waitFor();
    const problems = await axeProblems(page, 'viewer tenants');
    const viewerSees: Record<string, Controls> = { tenants: await changingControls(page) };
    // Keyboard: the first Tab reaches "Skip to content"; a tenant opens with Enter.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await page.getByLabel('Search by name or id').fill(tenantId);
    await page.getByRole('button', { name: /^Viewed / }).focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: /^Viewed / }).waitFor();
    Object.assign(viewerSees, await controlsByTab(page));
    // Not one control that changes anything, in any view.
    expect(viewerSees).toEqual(
      Object.fromEntries(Object.keys(viewerSees).map((view) => [view, { buttons: [], forms: 0 }])),
    );
    // The same look finds them in every view where an admin has them, so it could fail above.
    const asAdmin = await signIn('admin');
    const adminSees: Record<string, Controls> = { tenants: await changingControls(asAdmin.page) };
    await asAdmin.page.getByLabel('Search by name or id').fill(tenantId);
    await asAdmin.page.getByRole('button', { name: /^Viewed / }).click();
    await asAdmin.page.getByRole('heading', { level: 1, name: /^Viewed / }).waitFor();
    Object.assign(adminSees, await controlsByTab(asAdmin.page));
    await asAdmin.context.close();
    expect(Object.keys(adminSees)).toEqual(Object.keys(viewerSees));
    for (const [view, controls] of Object.entries(adminSees)) {
      expect(controls.buttons.length, view).toBeGreaterThan(0);
      expect(controls.forms, view).toBeGreaterThan(0);
    }
    await openTab(page, 'Tokens');
    await page.getByTestId('token-rows').locator('tr').first().waitFor();
    problems.push(...(await axeProblems(page, 'viewer tokens')));

    // The page's own session may still try: the API says no, with its code.
    const answer = await page.evaluate(async (id) => {
      const res = await fetch(`/admin/tenants/${id}/cache/purge`, { method: 'POST' });
      return { status: res.status, code: ((await res.json()) as { code: number }).code };
    }, tenantId);
    expect(answer).toEqual({ status: 403, code: 40304 });
    expect(await pageText(page)).not.toContain(token);
    expect(printed.filter((l) => /pageerror|Content Security Policy/i.test(l))).toEqual([]);
    expect(problems).toEqual([]);
    await context.close();
  }, 120_000);

  it('works the same through the console Worker (its own hostname, a Service Binding)', async () => {
    const origin = gateway.consoleUrl ?? '';
    expect(origin).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const csp = (await fetch(`${origin}/console/`)).headers.get('content-security-policy');
    expect(csp).toContain("default-src 'self'");
    const { page, context, requested } = await signIn('admin', origin);
    // A change through it: the console's own Origin is the gateway's Origin check's.
    const name = `Via console ${Date.now()}`;
    await page.locator('#new-name').fill(name);
    await page.getByLabel('Platform key').fill(DEMO_PLATFORM_KEY);
    await page.getByRole('button', { name: 'Create tenant' }).click();
    await page.locator('[data-secret]').waitFor();
    await page.getByRole('button', { name: 'Done, hide it' }).click();
    await page.getByRole('heading', { level: 1, name }).waitFor();
    const admin = requested.filter((u) => new URL(u).pathname.startsWith('/admin/'));
    expect(admin.length).toBeGreaterThan(0);
    expect(admin.every((u) => u.startsWith(`${origin}/admin/`))).toBe(true);
    await context.close();
  }, 60_000);
});
