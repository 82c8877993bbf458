/**
 * The browser demo end to end in real Chromium (Debian's, driven by
 * playwright-core) against a running gateway (wrangler dev + emulator):
 * the page works from its allowed origin; the same browser token is refused
 * from another origin and after expiry; no response the browser receives,
 * HTTP or WebSocket, carries the platform key or the tenant's token.
 */
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDemo } from '../../demo/server';
import { DEMO_PLATFORM_KEY } from '../../emulator/seed';
import { freePort } from '../../scripts/free-port';
import { createTenant, type Stack } from '../../scripts/stack';
import { freshStack } from './fresh-stack';

const STATE = '.wrangler/e2e-test-state';
let stack: Stack;
let browser: Browser;
let tenantToken: string;
const demos: { url: string; close(): Promise<void> }[] = [];
/** Everything any page received: response bodies and headers, WebSocket frames. */
const received: string[] = [];

beforeAll(async () => {
  stack = await freshStack(STATE);
  const tenant = await createTenant(stack, 'e2e', DEMO_PLATFORM_KEY);
  tenantToken = tenant.token;
  const allowed = await startDemo({
    port: await freePort(),
    gatewayUrl: stack.gatewayUrl,
    tenantToken,
  });
  const other = await startDemo({
    port: await freePort(),
    gatewayUrl: stack.gatewayUrl,
    tenantToken,
  });
  demos.push(allowed, other);
  const res = await fetch(`${stack.gatewayUrl}/admin/tenants/${tenant.tenant_id}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${stack.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ cors_origins: [allowed.url] }),
  });
  expect(res.status).toBe(200);
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
});

afterAll(async () => {
  await browser?.close();
  await Promise.all(demos.map((d) => d.close()));
  await stack?.stop();
});

async function openPage(url: string): Promise<Page> {
  const page = await browser.newPage();
  page.on('response', async (response) => {
    received.push(JSON.stringify(await response.allHeaders()));
    if (response.status() !== 101) received.push(await response.text().catch(() => ''));
  });
  page.on('websocket', (ws) =>
    ws.on('framereceived', (frame) => received.push(String(frame.payload))),
  );
  await page.goto(url);
  await page.waitForFunction(() => (window as any).demo?.gateway);
  return page;
}

const text = (page: Page, selector: string) => page.locator(selector).innerText();

describe('browser demo in Chromium', () => {
  let token = '';

  it('lists teams, creates a session and shows its event stream from the allowed origin', async () => {
    const page = await openPage(demos[0]!.url);
    await page.click('#get-token');
    await page.waitForFunction(() => (window as any).demo.token);
    token = await page.evaluate(() => (window as any).demo.token as string);
    expect(token).toMatch(/^apgb_/);

    await page.click('#list-teams');
    await page.waitForSelector('#teams li:not(.muted)');
    const teams = await page.locator('#teams li').allInnerTexts();
    expect(teams.length).toBeGreaterThan(0);
    expect(teams.every((t) => t.startsWith('Demo:'))).toBe(true);

    await page.click('#create-session');
    await page.waitForFunction(
      () => document.getElementById('stream-status')!.textContent === 'completed',
      null,
      { timeout: 20_000 },
    );
    expect(await text(page, '#session-id')).toMatch(/^[0-9a-f-]{36}$/);
    const events = await page.locator('#events li').allInnerTexts();
    expect(events[0]).toContain('session.snapshot');
    expect(events.filter((e) => e.startsWith('agent:')).length).toBeGreaterThan(1);
    expect(await text(page, '#error')).toBe('');
    await page.close();
  });

  it('refuses the same token from another origin, over HTTP and WebSocket', async () => {
    const page = await openPage(demos[1]!.url);
    const outcome = await page.evaluate(
      async ([gateway, t]) => {
        const http = await fetch(`${gateway}/team/lists`, {
          headers: { authorization: `Bearer ${t}` },
        }).then(
          (r) => `status ${r.status}`,
          (e: Error) => `blocked: ${e.name}`,
        );
        const ws = await new Promise<string>((resolve) => {
          const socket = new WebSocket(`${gateway.replace(/^http/, 'ws')}/session/ws/anything`, [
            'apgw',
            t,
          ]);
          socket.onopen = () => resolve('open');
          socket.onclose = (e) => resolve(`closed ${e.code}`);
        });
        return { http, ws };
      },
      [stack.gatewayUrl, token] as const,
    );
    // No CORS grant for this origin: the browser may not read the answer at all.
    expect(outcome.http).toBe('blocked: TypeError');
    expect(outcome.ws).toBe('closed 1006');

    // Its own backend cannot mint a token for this origin either.
    await page.click('#get-token');
    await page.waitForFunction(() => document.getElementById('error')!.textContent !== '');
    expect(await text(page, '#error')).toContain('is not among this tenant');
    await page.close();

    // What the gateway answered (read outside the browser): 403, origin not allowed.
    const res = await fetch(`${stack.gatewayUrl}/team/lists`, {
      headers: { authorization: `Bearer ${token}`, origin: demos[1]!.url },
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as { code: number }).code).toBe(40301);
  });

  it('refuses a token after it expires, and the page can read why', async () => {
    const page = await openPage(demos[0]!.url);
    await page.evaluate(() => (window as any).demo.getToken(5));
    await page.waitForFunction(() => (window as any).demo.token);
    await page.click('#list-teams');
    await page.waitForSelector('#teams li:not(.muted)');
    await page.waitForTimeout(5500);
    await page.click('#list-teams');
    await page.waitForFunction(() => document.getElementById('error')!.textContent !== '');
    expect(await text(page, '#error')).toMatch(/expired \(code 40103/);
    await page.close();
  });

  it('never received the platform key or the tenant token', () => {
    expect(received.length).toBeGreaterThan(10);
    const all = received.join('\n');
    expect(all).not.toContain(DEMO_PLATFORM_KEY);
    expect(all).not.toContain(tenantToken);
  });
});
