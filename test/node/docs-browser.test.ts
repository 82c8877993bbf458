/**
 * GET /docs in real Chromium (Debian's, driven by playwright-core), served by
 * the built Worker on plain workerd: the page shows every operation of the
 * document, loads nothing from outside loopback, breaks no CSP rule of its
 * own, and a tenant's token can try a call from it.
 */
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PLATFORM_KEY } from '../../emulator/seed';
import { type RunningEmulator, startEmulator } from '../../emulator/server';
import { type GatewayHost, startGateway } from '../../scripts/workerd-host';

let emulator: RunningEmulator;
let gateway: GatewayHost;
let browser: Browser;
let token = '';

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
  gateway = await startGateway({ platformBaseUrl: emulator.url });
  const res = await fetch(`${gateway.url}/admin/tenants`, {
    method: 'POST',
    headers: { authorization: `Bearer ${gateway.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'docs', platform_key: DEMO_PLATFORM_KEY }),
  });
  token = ((await res.json()) as { data: { token: string } }).data.token;
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

/**
 * Opens /docs, recording every URL the page asks for, every console error and
 * warning, and every answer of 400 or more.
 */
async function openDocs(): Promise<{
  page: Page;
  requested: string[];
  errors: string[];
  failed: string[];
}> {
  const page = await browser.newPage();
  const requested: string[] = [];
  const errors: string[] = [];
  const failed: string[] = [];
  page.on('request', (request) => requested.push(request.url()));
  page.on('requestfinished', async (request) => {
    const status = (await request.response())?.status() ?? 0;
    if (status >= 400) failed.push(`${status} ${request.url()}`);
  });
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') errors.push(message.text());
  });
  await page.goto(`${gateway.url}/docs`);
  return { page, requested, errors, failed };
}

/** "Test Request" on List teams, then Send, as a partner would: the gateway's answer. */
async function sendListTeams(page: Page) {
  await page
    .getByRole('button', { name: /^List teams/ })
    .first()
    .click();
  await page
    .locator('[id="api-1/tag/teams/GET/team/lists"] button', { hasText: 'Test Request' })
    .click();
  const answered = page.waitForResponse((r) => new URL(r.url()).pathname === '/team/lists');
  await page.getByRole('button', { name: /Send Request/ }).click();
  return answered;
}

describe('/docs in Chromium', () => {
  it('shows every operation, and asks nothing of anyone but the gateway', async () => {
    const { page, requested, errors, failed } = await openDocs();
    const doc = (await (await fetch(`${gateway.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { summary: string }>>;
    };
    const summaries = Object.values(doc.paths).flatMap((ops) =>
      Object.values(ops).map((op) => op.summary),
    );
    expect(summaries.length).toBeGreaterThan(18);
    await page.waitForFunction(
      (all) => all.every((s) => document.body.innerText.includes(s)),
      summaries,
      { timeout: 30_000 },
    );
    const elsewhere = requested.filter(
      (url) => !url.startsWith(`${gateway.url}/`) && !/^(data|blob):/.test(url),
    );
    expect(elsewhere).toEqual([]);
    expect(requested).toContain(`${gateway.url}/openapi.json`);
    // The page's own code never needs what the policy forbids; the reference takes the
    // document without a validation warning; the page's icon is there (no 404).
    expect(errors.filter((e) => /Content Security Policy/i.test(e))).toEqual([]);
    expect(errors.filter((e) => /document validation errors/i.test(e))).toEqual([]);
    expect(requested).toContain(`${gateway.url}/favicon.svg`);
    expect(failed).toEqual([]);
    expect(errors.filter((e) => /Failed to load resource/.test(e))).toEqual([]);
    await page.close();
  });

  it("lets a tenant's token try a call from the page", async () => {
    const { page, requested } = await openDocs();
    // As a partner would: token in the Authentication box, "Test Request" on List teams, Send.
    await page.locator('input[placeholder="Token"]:visible').first().fill(token);
    const response = await sendListTeams(page);
    expect(response.status()).toBe(200);
    expect(((await response.json()) as { code: number }).code).toBe(0);
    expect(response.request().headers().authorization).toBe(`Bearer ${token}`);
    await page.getByText('200 OK').first().waitFor();
    expect(requested.filter((url) => !url.startsWith(`${gateway.url}/`))).toEqual([]);
    await page.close();
  });

  it('says a token is missing, not invalid, when Send goes with the token box empty', async () => {
    const { page } = await openDocs();
    await page.locator('input[placeholder="Token"]:visible').first().waitFor();
    const response = await sendListTeams(page);
    // What the reference sends for an empty box: the scheme alone.
    expect(response.request().headers().authorization).toBe('Bearer');
    expect(response.status()).toBe(401);
    expect(((await response.json()) as { code: number }).code).toBe(40100);
    await page.close();
  });
});
