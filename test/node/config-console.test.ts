/**
 * The fleet file in the operator console (Chromium, the built Worker on workerd, signed
 * in through the local Access stand-in): the last applied plan (who, when, its hash) and
 * "Download as file", whose bytes are those `config dump` writes; a viewer sees the plan
 * and no download.
 */
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PLATFORM_KEY } from '../../emulator/seed';
import { type RunningEmulator, startEmulator } from '../../emulator/server';
import { fleetOf } from '../../scripts/bench/fleet-file';
import {
  LOCAL_ADMIN_EMAIL,
  LOCAL_VIEWER_EMAIL,
  type LocalAccess,
  startLocalAccess,
} from '../../scripts/local-access';
import { type GatewayHost, startGateway } from '../../scripts/workerd-host';
import { adminClient } from '../../ui/lib/admin-client';
import { fleetToYaml } from '../../ui/lib/fleet-yaml';

let emulator: RunningEmulator;
let access: LocalAccess;
let gateway: GatewayHost;
let browser: Browser;
let hash = '';

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
  access = await startLocalAccess();
  gateway = await startGateway({ platformBaseUrl: emulator.url, vars: { ...access.vars } });
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  const admin = adminClient(gateway.url, {
    headers: { authorization: `Bearer ${gateway.adminToken}` },
  });
  const body = {
    config: fleetOf(3, 'K') as Record<string, unknown>,
    platform_keys: { K: DEMO_PLATFORM_KEY },
  };
  const planned = (await (await admin.config.plan.$post({ json: body })).json()) as {
    data: { hash: string };
  };
  hash = planned.data.hash;
  const applied = await admin.config.apply.$post(
    { json: body },
    { headers: { 'if-match': `"${hash}"` } },
  );
  if (applied.status !== 200) throw new Error(`apply: HTTP ${applied.status}`);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gateway?.stop();
  await access?.close();
  await emulator?.close();
});

async function signIn(role: 'admin' | 'viewer'): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(access.loginUrl(role, `${gateway.url}/console/#overview`));
  await page
    .getByTestId('whoami')
    .getByText(role === 'admin' ? LOCAL_ADMIN_EMAIL : LOCAL_VIEWER_EMAIL)
    .waitFor();
  return page;
}

describe('the fleet file in the console', () => {
  it('shows the last applied plan, and downloads the fleet as the CLI dumps it', async () => {
    const page = await signIn('admin');
    const last = page.getByTestId('last-applied');
    await expect.poll(() => last.textContent()).toContain(hash.slice(0, 12));
    expect(await last.textContent()).toMatch(/by admin-token at .+: \d+ of \d+ change\(s\)\.$/);
    expect(await last.locator('code').getAttribute('title')).toBe(hash);

    const download = page.waitForEvent('download');
    await page.getByRole('button', { name: 'Download as file' }).click();
    const saved = await download;
    expect(saved.suggestedFilename()).toMatch(/^fleet-\d{4}-\d{2}-\d{2}\.yaml$/);
    let text = '';
    for await (const chunk of await saved.createReadStream()) text += chunk;
    const admin = adminClient(gateway.url, {
      headers: { authorization: `Bearer ${gateway.adminToken}` },
    });
    const dumped = (await (await admin.config.$get({ query: {} })).json()) as { data: unknown };
    expect(text).toBe(fleetToYaml(dumped.data));
    expect(text).toContain('ref: partner-001');
    expect(text).not.toContain(DEMO_PLATFORM_KEY);
  });

  it('shows a viewer the plan, and no download', async () => {
    const page = await signIn('viewer');
    await expect
      .poll(() => page.getByTestId('last-applied').textContent())
      .toContain(hash.slice(0, 12));
    expect(await page.getByRole('button', { name: 'Download as file' }).count()).toBe(0);
  });
});
