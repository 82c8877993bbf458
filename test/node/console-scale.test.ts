/**
 * The console at scale, in Chromium: 1,000 tenants, and a tenant with 90 days
 * of hourly usage history. Prints how long the tenant list and a 90-day chart
 * take (docs/CONSOLE.md, "Measured"); never asserts a time. The history is
 * written by a test-only entry (test/fixtures/history-seed/index.ts: the
 * gateway plus one seeding path), since 90 days cannot be lived through in a
 * test. Also makes the usage page's screenshot: docs/img/console-usage.png when
 * UPDATE_SCREENSHOT=1 (or when it is missing), else .dev/console-usage.png, so an
 * ordinary `npm test` leaves the checked-in picture alone.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PLATFORM_KEY } from '../../emulator/seed';
import { type RunningEmulator, startEmulator } from '../../emulator/server';
import { LOCAL_ADMIN_EMAIL, type LocalAccess, startLocalAccess } from '../../scripts/local-access';
import { type GatewayHost, startGateway } from '../../scripts/workerd-host';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TENANTS = 1000;
const CONFIG = path.join(ROOT, '.dev', 'console-scale.wrangler.toml');

let emulator: RunningEmulator;
let access: LocalAccess;
let gateway: GatewayHost;
let browser: Browser;

/** wrangler.toml with the seeding entry as `main`; paths from .dev/. */
function seedConfig(): string {
  const toml = readFileSync(path.join(ROOT, 'wrangler.toml'), 'utf8')
    .replace(/^main = "src\/index.ts"$/m, 'main = "../test/fixtures/history-seed/index.ts"')
    .replace(/^directory = "\.\/build\/assets"$/m, 'directory = "../build/assets"');
  expect(toml).toContain('history-seed/index.ts');
  mkdirSync(path.dirname(CONFIG), { recursive: true });
  writeFileSync(CONFIG, toml);
  return CONFIG;
}

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
  access = await startLocalAccess();
  gateway = await startGateway({
    platformBaseUrl: emulator.url,
    configPath: seedConfig(),
    vars: {
      ...access.vars,
    },
  });
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await gateway?.stop();
  await access?.close();
  await emulator?.close();
  rmSync(CONFIG, { force: true });
});

const admin = async (p: string, init: RequestInit = {}) => {
  const res = await fetch(`${gateway.url}${p}`, {
    ...init,
    headers: { authorization: `Bearer ${gateway.adminToken}`, 'content-type': 'application/json' },
  });
  const body = (await res.json()) as { code: number; data: Record<string, unknown> };
  if (!res.ok) throw new Error(`${p}: ${res.status} ${JSON.stringify(body)}`);
  return body.data;
};

async function signIn(): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(access.loginUrl('admin', `${gateway.url}/console/`));
  await page.getByTestId('whoami').getByText(LOCAL_ADMIN_EMAIL).waitFor();
  return page;
}

const ms = (t0: number) => `${(performance.now() - t0).toFixed(0)} ms`;

/**
 * Where a docs screenshot goes: docs/img/ with UPDATE_SCREENSHOT=1 (or when it is
 * missing), else .dev/, so an ordinary `npm test` leaves the checked-in pictures alone.
 */
function picturePath(name: string): string {
  const docs = path.join(ROOT, 'docs/img', name);
  return process.env.UPDATE_SCREENSHOT === '1' || !existsSync(docs)
    ? docs
    : path.join(ROOT, '.dev', name);
}

describe('the console at 1,000 tenants and 90 days of history', () => {
  it('lists 1,000 tenants a page at a time and draws 90 days of hourly history', async () => {
    // 1,000 tenants through the operator API, 8 at a time.
    const t0 = performance.now();
    const names: string[] = [];
    for (let i = 0; i < TENANTS; i++) names.push(`Tenant ${String(i).padStart(4, '0')}`);
    const ids: string[] = [];
    for (let i = 0; i < TENANTS; i += 8) {
      const made = await Promise.all(
        names.slice(i, i + 8).map((name) =>
          admin('/admin/tenants', {
            method: 'POST',
            body: JSON.stringify({ name, platform_key: DEMO_PLATFORM_KEY }),
          }),
        ),
      );
      ids.push(...made.map((m) => m.tenant_id as string));
    }
    console.log(`[console-scale] made ${TENANTS} tenants in ${ms(t0)}`);

    // The tenant list: from navigation to the first page of rows on screen.
    const page = await signIn();
    let t = performance.now();
    await page.goto(`${gateway.url}/console/#tenants`);
    await page.getByTestId('tenant-rows').locator('tr').nth(49).waitFor();
    const listed = ms(t);
    t = performance.now();
    await page.getByRole('button', { name: 'Next page' }).click();
    await page
      .getByRole('button', { name: 'Previous page' })
      .and(page.locator(':enabled'))
      .waitFor();
    await page.getByTestId('tenant-rows').locator('tr').nth(49).waitFor();
    const nextPage = ms(t);
    t = performance.now();
    const answered = page.waitForResponse(
      (r) => new URL(r.url()).searchParams.get('q') === 'Tenant 0777',
    );
    await page.getByLabel('Search by name or id').fill('Tenant 0777');
    await answered;
    await page.getByRole('button', { name: 'Tenant 0777' }).waitFor();
    const searched = ms(t);
    expect(await page.getByTestId('tenant-rows').locator('tr').count()).toBe(1);
    console.log(
      `[console-scale] tenant list at ${TENANTS} tenants: first page of 50 shown ${listed} after navigation; ` +
        `next page ${nextPage}; search for one name ${searched} (250 ms of it the typing pause)`,
    );

    // 90 days of hourly history for one tenant with two tokens.
    const id = ids[777] ?? '';
    const second = await admin(`/admin/tenants/${id}/tokens`, {
      method: 'POST',
      body: JSON.stringify({ name: 'partner' }),
    });
    const tokens = (await admin(`/admin/tenants/${id}/tokens`)).tokens as { id: string }[];
    expect(tokens.map((k) => k.id)).toContain(second.id);
    const seeded = await fetch(`${gateway.url}/__seed/history`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.adminToken}` },
      body: JSON.stringify({ tenant_id: id, token_ids: tokens.map((k) => k.id), hours: 90 * 24 }),
    });
    expect(seeded.status).toBe(200);
    console.log(`[console-scale] seeded ${JSON.stringify(await seeded.json())} (90 days by hour)`);

    await page.getByRole('button', { name: 'Tenant 0777' }).click();
    await page
      .getByRole('navigation', { name: 'Tenant sections' })
      .getByRole('button', { name: 'Usage' })
      .click();
    const drawn = (of: string) => page.locator(`section[data-drawn="${of}"]`);
    await drawn('24 h|hour|status').waitFor();
    const figures: string[] = [];
    // Several rounds: the first is a cold start (the guard's history read, the page's JIT).
    for (let round = 1; round <= 3; round++) {
      for (const bucket of ['day', 'hour'] as const) {
        await page.getByRole('button', { name: '24 h' }).click();
        await drawn('24 h|hour|status').waitFor();
        t = performance.now();
        await page.getByRole('button', { name: '90 d' }).click();
        if (bucket === 'hour') {
          await drawn('90 d|day|status').waitFor();
          t = performance.now();
          await page.getByLabel('Buckets').selectOption('hour');
        }
        await drawn(`90 d|${bucket}|status`).waitFor();
        const total = ms(t);
        const render = Number(await drawn(`90 d|${bucket}|status`).getAttribute('data-render-ms'));
        figures.push(
          `round ${round}, 90 d by ${bucket}: drawn ${render.toFixed(0)} ms after the data came, ${total} from the click`,
        );
      }
    }
    console.log(
      `[console-scale] usage charts (3 charts from 2 analytics calls):\n  ${figures.join('\n  ')}`,
    );
    expect(await page.getByTestId('usage-totals').textContent()).toMatch(
      /^[1-9]\d* requests and [1-9]\d* refusals in the last 90 d, by hour/,
    );

    // The screenshot for the docs: a week by hour, requests by status class.
    await page.getByRole('button', { name: '7 d' }).click();
    await drawn('7 d|hour|status').waitFor();
    const picture = picturePath('console-usage.png');
    await page.screenshot({ path: picture, fullPage: true });
    expect(statSync(picture).size).toBeGreaterThan(10_000);
    console.log(`[console-scale] screenshot: ${path.relative(ROOT, picture)}`);

    // Recent requests: 1,000 of this tenant (a fifth refused), found by id through the
    // API and in the console.
    const seededRequests = await fetch(`${gateway.url}/__seed/requests`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.adminToken}` },
      body: JSON.stringify({ tenant_id: id, token_ids: tokens.map((k) => k.id), count: 1000 }),
    });
    expect(await seededRequests.json()).toEqual({ requests: 1000 });
    const lookups: number[] = [];
    for (let i = 0; i < 20; i++) {
      const wanted = `seed-${String(i * 50 + 7).padStart(5, '0')}`;
      const started = performance.now();
      const found = await admin(`/admin/tenants/${id}/requests?request_id=${wanted}`);
      lookups.push(performance.now() - started);
      expect((found.requests as { request_id: string }[]).map((r) => r.request_id)).toEqual([
        wanted,
      ]);
    }
    lookups.sort((x, y) => x - y);
    await page
      .getByRole('navigation', { name: 'Tenant sections' })
      .getByRole('button', { name: 'Requests' })
      .click();
    await page.getByTestId('request-rows').locator('tbody tr').nth(49).waitFor();
    const lookedUp: string[] = [];
    for (const wanted of ['seed-00500', 'seed-00995', 'seed-00005']) {
      t = performance.now();
      await page.getByLabel('Request id').fill(wanted);
      await page.getByRole('button', { name: 'Find' }).click();
      await page.locator(`tr[data-request-id="${wanted}"]`).waitFor();
      lookedUp.push(ms(t));
    }
    console.log(
      `[console-scale] request log lookup by id at 1,000 entries: API median ${lookups[10]?.toFixed(0)} ms, ` +
        `max ${lookups[19]?.toFixed(0)} ms (20 lookups); in the console, typed id to row shown: ${lookedUp.join(', ')}`,
    );
    await page.getByLabel('Request id').fill('');
    await page.getByLabel('Status').fill('4xx');
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByTestId('request-rows').locator('tbody tr').nth(9).waitFor();
    // The section from its heading: the filter and the first rows (the page holds 50).
    await page.evaluate(() => document.getElementById('requests-title')?.scrollIntoView());
    await page.screenshot({ path: picturePath('console-requests.png') });

    // A plan with the 1,000 tenants on it, changed: every guard has it before the answer.
    const plan = 'scale-partners';
    await admin(`/admin/plans/${plan}`, {
      method: 'PUT',
      body: JSON.stringify({
        policies: [{ name: 'burst', limit: 200, window_s: 10 }],
        quota: { daily: 50_000 },
      }),
    });
    t = performance.now();
    for (let i = 0; i < TENANTS; i += 16) {
      await Promise.all(
        ids
          .slice(i, i + 16)
          .map((tenant) =>
            admin(`/admin/tenants/${tenant}`, { method: 'PATCH', body: JSON.stringify({ plan }) }),
          ),
      );
    }
    const joined = ms(t);
    const changes: string[] = [];
    for (let round = 1; round <= 3; round++) {
      t = performance.now();
      const changed = await admin(`/admin/plans/${plan}`, {
        method: 'PUT',
        body: JSON.stringify({
          policies: [{ name: 'burst', limit: 200 + round, window_s: 10 }],
          quota: { daily: 50_000 },
        }),
      });
      expect(changed).toMatchObject({ tenants: TENANTS, pending: 0 });
      changes.push(ms(t));
    }
    console.log(
      `[console-scale] plan at ${TENANTS} tenants: joined (${TENANTS} PATCH calls, 16 at a time) in ${joined}; ` +
        `a change reached every tenant's guard before its answer in ${changes.join(', ')}`,
    );
    // A second plan beside it, with a group quota, for the picture.
    await admin('/admin/plans/partner-gold', {
      method: 'PUT',
      body: JSON.stringify({
        policies: [
          { name: 'burst', limit: 100, window_s: 10 },
          { name: 'sustained', limit: 3000, window_s: 60 },
        ],
        quota: { daily: 100_000, monthly: 2_000_000, groups: { sessions: { daily: 500 } } },
      }),
    });
    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('button', { name: 'Plans' })
      .click();
    await page.getByTestId('plan-rows').getByRole('rowheader', { name: plan }).waitFor();
    await page.getByRole('button', { name: `Edit ${plan}` }).click();
    await page
      .getByRole('button', { name: `Save ${plan} for its ${TENANTS.toLocaleString('en')} tenants` })
      .waitFor();
    await page.screenshot({ path: picturePath('console-plans.png'), fullPage: true });

    // The overview at 1,000 tenants: a day of figures for each, in the fleet boards, as
    // their guards report them (written by the test-only entry: a day cannot be lived).
    const fleet = await fetch(`${gateway.url}/__seed/fleet`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.adminToken}` },
      body: JSON.stringify({ tenant_ids: ids }),
    });
    expect(fleet.status).toBe(200);
    const overviewTimes: string[] = [];
    for (let round = 1; round <= 3; round++) {
      // A whole page load each round, as the tenant list's figure above.
      await page.goto('about:blank');
      t = performance.now();
      await page.goto(`${gateway.url}/console/#overview`);
      await page.getByTestId('key-failures').locator('tbody tr').first().waitFor();
      await page.getByTestId('top-errors').locator('tbody tr').nth(9).waitFor();
      const shown = ms(t);
      await page.locator('section[data-drawn-ms]').waitFor();
      const asked = await page.locator('section[data-drawn-ms]').getAttribute('data-drawn-ms');
      const api = /Asked in (\d+) ms/.exec(await page.locator('main').innerText())?.[1];
      overviewTimes.push(
        `round ${round}: ${shown} from navigation to drawn (the overview call ${api} ms in the Worker, ${Number(asked).toFixed(0)} ms from asking to drawn in the page)`,
      );
    }
    expect(await page.getByTestId('overview-totals').textContent()).toMatch(
      /^The last 24 h .*: 1,0\d\d tenant/,
    );
    expect(await page.getByTestId('key-failures').locator('tbody tr').count()).toBe(10);
    console.log(`[console-scale] overview at ${TENANTS} tenants:\n  ${overviewTimes.join('\n  ')}`);
    // The fleet over time: a week by hour of every tenant, from the 16 boards.
    const fleetSeries = page.getByTestId('fleet-series');
    await fleetSeries.locator('figure.chart canvas').nth(1).waitFor();
    const weeks: string[] = [];
    for (let round = 1; round <= 3; round++) {
      await fleetSeries.getByRole('button', { name: '24 h' }).click();
      await fleetSeries
        .locator('figcaption', { hasText: /24 h\)$/ })
        .nth(1)
        .waitFor();
      t = performance.now();
      await fleetSeries.getByRole('button', { name: '7 d' }).click();
      await fleetSeries
        .locator('figcaption', { hasText: /7 d\)$/ })
        .nth(1)
        .waitFor();
      await fleetSeries.locator('figure.chart canvas').nth(1).waitFor();
      weeks.push(ms(t));
    }
    const series = (await admin('/admin/overview/series?hours=168')) as { ms: number };
    console.log(
      `[console-scale] the fleet's week by hour at ${TENANTS} tenants: the click to both charts drawn ` +
        `${weeks.join(', ')}; the series call ${series.ms} ms in the Worker`,
    );
    expect(await page.getByTestId('hour-shares').innerText()).toMatch(/Tenant \d{4} \S+ %/);
    await page.screenshot({ path: picturePath('console-overview.png'), fullPage: true });
  }, 600_000);
});
