/**
 * What a walk through the console found (issue 42, the table of item 4), each in real
 * Chromium (Debian's, driven by playwright-core) against the built Worker on plain
 * workerd, signed in through the local Access stand-in: what the operator sees after
 * creating a tenant, fixing a field, saving a working key, choosing a plan; the charts'
 * colours and axes; the words for quotas, durations and counts; narrow and wide screens.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { DEMO_PLATFORM_KEY, DEMO_SECOND_KEY } from '../../emulator/seed';
import { consoleStackForTests } from './console-stack';
import { untilRecorded } from './recorded';

const { started, admin, newTenant, asPartner, signIn } = consoleStackForTests();

const openTab = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Tenant sections' }).getByRole('button', { name }).click();

describe('the console, as the walk found it', () => {
  it('lists a created tenant at once, names it by its token, and clears an error once fixed', async () => {
    const { page, close } = await signIn('#tenants');
    const caption = page.locator('#tenants-count');
    await caption.waitFor();
    const before = Number(/^(\d+) tenant/.exec((await caption.textContent()) ?? '')?.[1] ?? 0);

    // A field refused by the browser's own check: its error goes once the field is fixed,
    // before anything is sent again.
    await page.getByRole('button', { name: 'Create tenant' }).click();
    await page.locator('#new-name-error').waitFor();
    await page.locator('#new-key-error').waitFor();
    const name = `Walk ${Date.now().toString(36)}`;
    await page.locator('#new-name').fill(name);
    await expect.poll(() => page.locator('#new-name-error').count()).toBe(0);
    expect(await page.locator('#new-name').getAttribute('aria-invalid')).toBe('false');
    // The other field keeps its own error until it is fixed too.
    expect(await page.locator('#new-key-error').count()).toBe(1);
    await page.getByLabel('Platform key').fill(DEMO_PLATFORM_KEY);
    await expect.poll(() => page.locator('#new-key-error').count()).toBe(0);

    await page.getByRole('button', { name: 'Create tenant' }).click();
    const box = page.locator('section.secret');
    await box.waitFor();
    // The token box names the tenant it belongs to, and the list already has its row.
    const id = (
      await admin<{ tenants: { id: string; name: string }[] }>(
        'GET',
        `/tenants?q=${encodeURIComponent(name)}`,
      )
    ).tenants[0]?.id;
    expect(id).toMatch(/^ten_/);
    expect(await box.getByRole('heading').textContent()).toContain(name);
    expect(await box.getByRole('heading').textContent()).toContain(id);
    await expect.poll(() => caption.textContent()).toContain(`${before + 1} tenant`);
    await page.getByTestId('tenant-rows').getByRole('button', { name }).waitFor();
    await close();
  });

  it('ends the key warnings once a working key is saved', async () => {
    const made = await newTenant('Refused key', `sk-made-up-${Date.now()}0000`);
    // The platform refuses the key: a request makes the tenant's guard raise the alert.
    const deadline = Date.now() + 30_000;
    for (;;) {
      expect((await asPartner(made.token)).status).toBe(502);
      const { alerts } = await admin<{ alerts: { alert: { kind: string } }[] }>(
        'GET',
        `/tenants/${made.tenant_id}/alerts/recent`,
      );
      if (alerts.some((a) => a.alert.kind === 'platform_key_rejected')) break;
      if (Date.now() > deadline) throw new Error('no key alert within 30 s');
      await new Promise((r) => setTimeout(r, 250));
    }
    const { page, close } = await signIn(`#tenant/${made.tenant_id}`);
    const banner = page.getByTestId('key-alert');
    await banner.waitFor();
    await openTab(page, 'Settings');
    await page.getByRole('button', { name: 'Check the current key' }).click();
    await page
      .getByTestId('key-check')
      .getByText('The platform refused this key (HTTP 401)')
      .waitFor();
    await page.getByLabel(/^New platform key/).fill(DEMO_SECOND_KEY);
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Saved, with the new platform key.').waitFor();
    // Neither the refused check nor the page's banner stays: the new key works.
    await page.getByTestId('key-check').getByText('The platform accepted this key').waitFor();
    expect(await page.getByText('The platform refused this key').count()).toBe(0);
    await expect.poll(() => banner.count()).toBe(0);
    // Nor after a reload: the refusal came before the change.
    await page.reload();
    await page.getByRole('heading', { level: 1 }).waitFor();
    await page.locator('dl.facts').waitFor();
    expect(await banner.count()).toBe(0);
    await close();
  });

  it("starts a planned tenant's own limits from its plan's, says which win, and counts the plan's tenants", async () => {
    const plan = `walk-${Date.now().toString(36)}`;
    await admin('PUT', `/plans/${plan}`, {
      policies: [{ name: 'plan-burst', limit: 777, window_s: 60 }],
      quota: { daily: 5555 },
    });
    const planned = await newTenant('Planned', DEMO_PLATFORM_KEY, { plan });
    const { page, close } = await signIn(`#tenant/${planned.tenant_id}`);
    await openTab(page, 'Limits');
    await page.getByTestId('limits-source').getByText(`the limits of its plan, ${plan}`).waitFor();
    // The editor holds the plan's values (what holds now), never the gateway's defaults.
    expect(await page.locator('#tenant-limits-p0-name').inputValue()).toBe('plan-burst');
    expect(await page.locator('#tenant-limits-p0-limit').inputValue()).toBe('777');
    expect(await page.getByLabel('Requests a day').inputValue()).toBe('5555');
    // It says what saving does: own limits win over the plan's until removed.
    await page
      .getByText(`Saving makes them this tenant's own limits: they win over plan ${plan}'s`)
      .waitFor();

    // The plan picker counts the plan's tenants as they are now, also after a change.
    const other = await newTenant('Joining');
    await page.goto(`${started().gateway.url}/console/#tenant/${other.tenant_id}`);
    await openTab(page, 'Limits');
    const picker = page.getByLabel('Plan', { exact: true });
    await picker
      .locator('option', { hasText: `${plan} (1 tenant)` })
      .waitFor({ state: 'attached' });
    await picker.selectOption(plan);
    await page.getByRole('button', { name: 'Change plan' }).click();
    await page.getByText(`Now on plan ${plan}.`).waitFor();
    await picker
      .locator('option', { hasText: `${plan} (2 tenants)` })
      .waitFor({ state: 'attached' });
    // Once on the plan, the editor holds the plan's values, not the limits held before.
    await expect.poll(() => page.locator('#tenant-limits-p0-limit').inputValue()).toBe('777');
    expect(await page.locator('#tenant-limits-p0-name').inputValue()).toBe('plan-burst');
    await close();
  });

  it('says a quota by its calendar period, UTC, and every time in words', async () => {
    const t = await newTenant('Quotas');
    await admin('PUT', `/tenants/${t.tenant_id}/limits`, {
      policies: [{ name: 'hourly', limit: 100, window_s: 3600 }],
      quota: { daily: 10_000, monthly: 200_000 },
    });
    const { page, close } = await signIn(`#tenant/${t.tenant_id}`);
    await openTab(page, 'Limits');
    const row = (name: string) =>
      page.getByTestId('meters').getByRole('row', { name: new RegExp(`^${name} `) });
    await row('monthly').waitFor();
    const now = new Date();
    const firstOfNext = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    const day = firstOfNext.toLocaleDateString('en', {
      month: 'short',
      day: 'numeric',
      timeZone: 'UTC',
    });
    // The month is the calendar month (UTC), never "30 days"; the day is the UTC day.
    expect(await row('monthly').innerText()).toContain(`UTC month, resets ${day}`);
    expect(await row('daily').innerText()).toContain('UTC day, resets 00:00 UTC');
    expect(await row('hourly').innerText()).toContain('\t1 h\t');
    // Times in words: hours and minutes, days and hours, never thousands of seconds.
    const meters = await page.getByTestId('meters').innerText();
    expect(meters).not.toMatch(/\d{3,} s\b/);
    expect(meters).not.toContain('30 days');
    expect(await row('monthly').innerText()).toMatch(/\t(\d+ days( \d+ h)?|\d+ h( \d+ min)?)$/);
    await close();
  });

  it('draws 2xx green and 4xx amber, and keeps the cache hit ratio within 0–100 %', async () => {
    const t = await newTenant('Colours');
    // More 4xx than 2xx (the busiest line once took the first colour, whatever it meant).
    for (let i = 0; i < 3; i++) expect((await asPartner(t.token)).status).toBe(200);
    for (let i = 0; i < 6; i++)
      expect((await asPartner(t.token, '/no/such/route')).status).toBe(404);
    const { page, close } = await signIn(`#tenant/${t.tenant_id}`);
    await openTab(page, 'Usage');
    const totals = page.getByTestId('usage-totals');
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Refresh' }).click();
          return totals.textContent({ timeout: 5000 });
        },
        { timeout: 60_000, interval: 1000 },
      )
      .toMatch(/^(8|9) requests/);
    const colourOf = (chart: string, label: string) =>
      page
        .locator('figure.chart', { hasText: chart })
        .locator('.u-series', { hasText: label })
        .locator('.u-marker')
        .evaluate((m) => (m as HTMLElement).style.borderColor);
    expect(await colourOf('Requests by status', '2xx')).toBe('rgb(46, 125, 50)');
    expect(await colourOf('Requests by status', '4xx')).toBe('rgb(138, 79, 0)');
    // Every read of /team/lists looked in the cache; the axis of a ratio stops at 100 %.
    const ratio = page
      .locator('figure.chart', { hasText: 'Cache hit ratio' })
      .locator('[role=img]');
    await expect.poll(() => ratio.getAttribute('data-y-max')).toBe('100');
    await close();
  });

  it('counts tokens in words, warns of one risky scope in the singular, and a refusal is no use', async () => {
    const t = await newTenant('Copy');
    const { page, close } = await signIn(`#tenant/${t.tenant_id}`);
    const caption = page.locator('table.grid caption', { hasText: 'never shown again' });
    await caption.getByText(/^1 token;/).waitFor();
    await page.getByRole('checkbox', { name: 'apikeys:write' }).check();
    await page.getByText("apikeys:write reaches the platform's own API keys").waitFor();
    await page.getByRole('checkbox', { name: 'apikeys:read' }).check();
    await page.getByText("apikeys:write, apikeys:read reach the platform's own API keys").waitFor();
    await close();

    // A token revoked before any use, then called: refused (401), which is no use.
    const unused = await admin<{ id: string; token: string }>(
      'POST',
      `/tenants/${t.tenant_id}/tokens`,
      { name: 'unused' },
    );
    await admin('DELETE', `/tenants/${t.tenant_id}/tokens/${unused.id}`);
    const refused = await asPartner(unused.token);
    expect(refused.status).toBe(401);
    const requestId = refused.headers.get('x-request-id') ?? '';
    await untilRecorded(started().gateway, t.tenant_id, requestId, () => asPartner(unused.token));
    // Its refusals are in the history (the usage by token counts them) ...
    const history = await admin<{ series: { token?: string; requests: number }[] }>(
      'GET',
      `/tenants/${t.tenant_id}/analytics?granularity=hour&group_by=token&from=${new Date(Date.now() - 3_600_000).toISOString()}`,
    );
    expect(history.series.some((p) => p.token === unused.id && p.requests > 0)).toBe(true);
    // ... but the token was never used.
    const again = await signIn(`#tenant/${t.tenant_id}`);
    const row = again.page.locator(`tr[data-token-id="${unused.id}"]`);
    expect(await row.getByTestId('last-used').textContent()).toBe('not in the history');
    await again.page.getByText(/^2 tokens;/).waitFor();
    await again.close();
  });

  it('never scrolls sideways at 390 px, and fits the requests at 1366 px with ids on one line', async () => {
    const t = await newTenant('Narrow and wide');
    await admin('PUT', `/tenants/${t.tenant_id}/limits`, {
      policies: [{ name: 'tiny', limit: 2, window_s: 3600 }],
      quota: {},
      limiter: 'exact',
    });
    for (let i = 0; i < 2; i++) expect((await asPartner(t.token)).status).toBe(200);
    // Refusals with long reasons, and a request id a client chose (longer than ours).
    expect((await asPartner(t.token)).status).toBe(429);
    const own = `client-chosen-request-id-${'x'.repeat(40)}`;
    const lost = await fetch(`${started().gateway.url}/no/such/route/at/all`, {
      headers: { authorization: `Bearer ${t.token}`, 'x-request-id': own },
    });
    expect(lost.status).toBe(404);
    await untilRecorded(started().gateway, t.tenant_id, own, () => asPartner(t.token));

    /** How far the page scrolls sideways (0: not at all). */
    const sideways = (page: Page) =>
      page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    const narrow = await signIn('#overview', 390);
    const views: [string, () => Promise<unknown>][] = [
      ['overview', () => narrow.page.getByRole('heading', { name: 'Overview' }).waitFor()],
      [
        'tenants',
        async () => {
          await narrow.page.goto(`${started().gateway.url}/console/#tenants`);
          await narrow.page.getByTestId('tenant-rows').locator('tr').first().waitFor();
        },
      ],
      ['plans', () => narrow.page.goto(`${started().gateway.url}/console/#plans`)],
      ['audit', () => narrow.page.goto(`${started().gateway.url}/console/#audit`)],
    ];
    for (const tab of ['Tokens', 'Limits', 'Usage', 'Requests', 'Alerts and cache', 'Settings']) {
      views.push([
        tab,
        async () => {
          if (!narrow.page.url().endsWith(t.tenant_id)) {
            await narrow.page.goto(`${started().gateway.url}/console/#tenant/${t.tenant_id}`);
          }
          await openTab(narrow.page, tab);
        },
      ]);
    }
    const scrolled: string[] = [];
    for (const [name, open] of views) {
      await open();
      await narrow.page.waitForLoadState('networkidle');
      await narrow.page.locator('.loading').first().waitFor({ state: 'detached' });
      const by = await sideways(narrow.page);
      if (by > 0) scrolled.push(`${name}: ${by} px`);
    }
    expect(scrolled).toEqual([]);
    await narrow.close();

    const wide = await signIn(`#tenant/${t.tenant_id}`, 1366);
    await openTab(wide.page, 'Requests');
    const table = wide.page.getByTestId('request-rows');
    await table.locator('tbody tr').nth(3).waitFor();
    expect(await sideways(wide.page)).toBe(0);
    expect(await table.evaluate((el) => el.scrollWidth - el.clientWidth)).toBe(0);
    // The request ids (the second column) and the trace ids (the last).
    const lines = await table
      .locator('tbody td:nth-child(2) code, tbody td:last-child code')
      .evaluateAll((ids) => ids.map((id) => id.getClientRects().length));
    expect(lines.length).toBeGreaterThan(3);
    expect(lines.every((n) => n === 1)).toBe(true);
    // Headers break between words only (one whole word per line at the most).
    const headers = await table.locator('thead th').evaluateAll((ths) =>
      ths.map((th) => {
        const range = document.createRange();
        range.selectNodeContents(th);
        return [th.textContent ?? '', range.getClientRects().length] as const;
      }),
    );
    for (const [text, rows] of headers) {
      expect(rows, text).toBeLessThanOrEqual(text.split(' ').length);
    }
    // Each id is one line high: as high as the time beside it.
    const heights = await table
      .locator('tbody tr')
      .first()
      .evaluate((row) => {
        const [when, id] = [row.children[0], row.children[1]?.querySelector('code')];
        return [when?.getBoundingClientRect().height, id?.getBoundingClientRect().height];
      });
    expect(heights[1]).toBeLessThanOrEqual(heights[0] ?? 0);
    await wide.close();
  });

  it('lists the quota alerts of a tenant without a webhook', async () => {
    const t = await newTenant('Spent, no webhook');
    await admin('PUT', `/tenants/${t.tenant_id}/limits`, {
      policies: [],
      quota: { daily: 4 },
      limiter: 'exact',
    });
    for (let i = 0; i < 4; i++) expect((await asPartner(t.token)).status).toBe(200);
    expect((await asPartner(t.token)).status).toBe(429);
    const { page, close } = await signIn(`#tenant/${t.tenant_id}`);
    await openTab(page, 'Alerts and cache');
    await page.getByText('No webhook is set: alerts are only listed below.').waitFor();
    const rows = page.getByTestId('recent-alerts');
    await rows.getByText('Quota daily at 100 %: 4 of 4 used').waitFor();
    expect(await rows.innerText()).toContain('no webhook set');
    expect(await page.getByText('No alert raised yet.').count()).toBe(0);
    await close();
  });

  it('signs in from a signed-out local console, and / points to the docs, the portal and the console', async () => {
    const context = await started().browser.newContext();
    const page = await context.newPage();
    const front = await page.goto(`${started().gateway.url}/`);
    expect(front?.status()).toBe(200);
    expect(front?.headers()['content-type']).toContain('text/html');
    expect(front?.headers()['content-security-policy']).toContain("default-src 'none'");
    const links = await page
      .getByRole('link')
      .evaluateAll((as) => as.map((a) => new URL((a as HTMLAnchorElement).href).pathname));
    expect(links).toEqual(expect.arrayContaining(['/docs', '/portal/', '/console/']));
    for (const path of ['/docs', '/portal/', '/console/']) {
      expect((await fetch(`${started().gateway.url}${path}`)).status, path).toBe(200);
    }
    // Signed out (no Access cookie yet): the console links to the local sign-in, which
    // brings the operator back, signed in.
    await page.getByRole('link', { name: 'Operator console' }).click();
    await page.getByText('You are not signed in').waitFor();
    await page
      .getByTestId('local-sign-in')
      .getByRole('link', { name: /local admin/ })
      .click();
    await page.getByTestId('whoami').getByText('admin@operators.local').waitFor();
    expect(new URL(page.url()).pathname).toBe('/console/');
    await context.close();
  });
});
