/**
 * What the console lacked (issue 42 item 5), in real Chromium against the built Worker on
 * plain workerd, signed in through the local Access stand-in: the fleet's series on the
 * overview (24 h and 7 d, a tenant's share of the hour pointed at), and the request
 * explorer over a time range, filtered as the recent list is.
 */
import { describe, expect, it } from 'vitest';
import { consoleStackForTests } from './console-stack';

const { started, admin, newTenant, asPartner, signIn } = consoleStackForTests();

describe('the fleet over time, on the overview', () => {
  it("draws the fleet's hours over 24 h and 7 d, and says a tenant's share of an hour", async () => {
    const big = await newTenant('Fleet big');
    const small = await newTenant('Fleet small');
    for (let i = 0; i < 15; i++) expect((await asPartner(big.token)).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await asPartner(small.token)).status).toBe(200);
    // The guards report to their boards from their alarms (5 s after traffic at the soonest).
    const deadline = Date.now() + 60_000;
    for (;;) {
      const s = await admin('GET', '/overview/series?hours=24');
      const last = s.points[s.points.length - 1];
      const named = last.top.requests.map(([i]: [number, number]) => s.tenants[i].tenant_id);
      if (named.includes(big.tenant_id) && named.includes(small.tenant_id)) break;
      if (Date.now() > deadline) throw new Error('the boards did not hear of both within 60 s');
      await new Promise((r) => setTimeout(r, 500));
    }

    const { page, close } = await signIn('#overview');
    const fleet = page.getByTestId('fleet-series');
    await fleet.locator('figure.chart canvas').nth(1).waitFor();
    expect(await fleet.locator('figure.chart figcaption').allInnerTexts()).toEqual([
      'Requests across tenants, by hour (24 h)',
      'Latency across tenants (upper bound of the bucket; 24 h)',
    ]);
    // The running hour: each tenant's share of its requests, named, as the API counts it.
    const shares = page.getByTestId('hour-shares');
    const requestsRow = shares.getByRole('row', { name: /^requests/ });
    await requestsRow.getByRole('button', { name: /^Fleet big/ }).waitFor();
    const row = await requestsRow.innerText();
    expect(row).toMatch(/Fleet big \S+ \d+(\.\d)? % \(\d+\)/);
    expect(row).toMatch(/Fleet small \S+ \d+(\.\d)? % \(\d+\)/);
    // The p95 is a bucket's bound.
    expect(await shares.getByRole('heading').innerText()).toMatch(/p95 ≤ [\d,]+ ms$/);

    // Pointing at the chart's first hour (nothing then): the panel follows the pointer.
    const plot = fleet.locator('figure.chart').first().locator('.u-over');
    const box = await plot.boundingBox();
    if (!box) throw new Error('no plot area');
    await page.mouse.move(box.x + 2, box.y + box.height / 2);
    await expect
      .poll(() => shares.getByRole('row', { name: /^requests/ }).innerText())
      .toContain('—');
    // And the keyboard: the slider's last step is the running hour again.
    await page.getByLabel('Hour', { exact: true }).focus();
    await page.keyboard.press('End');
    await requestsRow.getByRole('button', { name: /^Fleet big/ }).waitFor();

    // 7 days: 168 hours.
    await fleet.getByRole('button', { name: '7 d' }).click();
    await fleet.locator('figcaption', { hasText: '(7 d)' }).first().waitFor();
    expect(await page.getByLabel('Hour', { exact: true }).getAttribute('max')).toBe('167');
    // A name opens its tenant.
    await page.keyboard.press('End');
    await requestsRow.getByRole('button', { name: /^Fleet small/ }).click();
    await page.getByRole('heading', { level: 1, name: /^Fleet small/ }).waitFor();
    await close();
  });
});

describe('the request explorer', () => {
  it('finds requests over a time range, not only the newest 1,000', async () => {
    const t = await newTenant('Explorer');
    // Exact mode: each request's guard call hands over the row of the one before.
    await admin('PUT', `/tenants/${t.tenant_id}/limits`, {
      policies: [{ name: 'roomy', limit: 100_000, window_s: 60 }],
      quota: {},
      limiter: 'exact',
    });
    const send = async (n: number) => {
      const ids: string[] = [];
      for (let i = 0; i < n; i += 8) {
        const answers = await Promise.all(
          Array.from({ length: Math.min(8, n - i) }, () => asPartner(t.token)),
        );
        for (const a of answers) {
          expect(a.status).toBe(200);
          ids.push(a.headers.get('x-request-id') ?? '');
        }
      }
      return ids;
    };
    const start = Date.now();
    const early = await send(50);
    // The range ends where the next second begins; the rest come after it.
    const edge = (Math.floor(Date.now() / 1000) + 1) * 1000;
    while (Date.now() < edge + 5) await new Promise((r) => setTimeout(r, 5));
    const late = await send(1050);
    // The last request's row rides on a later guard call.
    await asPartner(t.token);

    const context = await started().browser.newContext({
      viewport: { width: 1280, height: 900 },
      timezoneId: 'UTC',
    });
    const page = await context.newPage();
    await page.goto(
      started().access.loginUrl('admin', `${started().gateway.url}/console/#tenant/${t.tenant_id}`),
    );
    await page
      .getByRole('navigation', { name: 'Tenant sections' })
      .getByRole('button', { name: 'Requests' })
      .click();
    const rows = page.getByTestId('request-rows').locator('tbody tr');
    await rows.first().waitFor();
    // The browser's field is its own zone's time (UTC here), to the second.
    const local = (ms: number) => new Date(ms).toISOString().slice(0, 19);
    await page.getByLabel('From', { exact: true }).fill(local(start - 60_000));
    await page.getByLabel('To', { exact: true }).fill(local(edge));
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByText('50 requests, newest first').waitFor();
    const listed = await rows.evaluateAll((trs) =>
      trs.map((tr) => tr.getAttribute('data-request-id')),
    );
    expect([...listed].sort()).toEqual([...early].sort());
    expect(listed).not.toContain(late[0]);
    expect(await page.getByRole('button', { name: 'Older' }).isDisabled()).toBe(true);
    // Beside them, what the usage history counts in those hours: every request.
    await expect
      .poll(() => page.getByTestId('history-count').textContent())
      .toMatch(/^The usage history counts [\d,]+ requests in the hours from /);
    const counted = Number(
      /counts ([\d,]+) requests/
        .exec((await page.getByTestId('history-count').textContent()) ?? '')?.[1]
        ?.replace(/,/g, ''),
    );
    expect(counted).toBeGreaterThanOrEqual(50);

    // Filtered as the list is, and a preset range a click away.
    await page.getByRole('button', { name: 'Last hour' }).click();
    await page.getByText(/^50 requests, newest first/).waitFor();
    expect(await page.getByLabel('To', { exact: true }).inputValue()).not.toBe(local(edge));
    await page.getByLabel('Request id').fill(early[0] ?? '');
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByText('1 request, newest first').waitFor();
    expect(await rows.first().getAttribute('data-request-id')).toBe(early[0]);
    await context.close();
  }, 240_000);
});
