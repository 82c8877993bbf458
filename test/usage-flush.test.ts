/**
 * Usage that is never lost (docs/OBSERVABILITY.md, "Usage history"): a
 * finished request reaches its tenant's usage history within USAGE_FLUSH_MS
 * and a bit even when no request follows it, the meters come back to what was
 * admitted once the leases have ended, and requests refused before admission
 * under a known token (401 revoked, 403 scope, 404 unknown path) are counted
 * too. Real time: the test waits for the history to show it, never for a
 * fixed pause.
 */
import { describe, expect, it } from 'vitest';
import { USAGE_FLUSH_MS } from '../src/limits/usage-buffer';
import { admin, asTenant, createTenant, envelope, expectRefusal, type TestTenant } from './helpers';

/** Asks the history (through the operator API, which records nothing) until `want` holds. */
async function waitForHistory(t: TestTenant, query: string, want: (data: any) => boolean) {
  const started = Date.now();
  // Past the timer, with room for a loaded machine; the history is asked every 250 ms.
  while (Date.now() - started < USAGE_FLUSH_MS + 8_000) {
    const data = (await envelope(await admin(`/tenants/${t.id}/analytics?${query}`))).data;
    if (want(data)) return { data, ms: Date.now() - started };
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`the usage history did not show it within ${USAGE_FLUSH_MS + 8_000} ms`);
}

const requestsOf = (data: { series: { requests: number }[] }) =>
  data.series.reduce((sum, p) => sum + p.requests, 0);

describe('usage history without a later request', () => {
  it('shows all six calls after a pause, and the meters come back to six', async () => {
    const t = await createTenant();
    // A burst under 100 a window: no regional broker pools this tenant, so every unit
    // counted is one an isolate held (a broker's pool is counted until its next call).
    await admin(`/tenants/${t.id}/limits`, {
      method: 'PUT',
      body: JSON.stringify({
        policies: [{ name: 'burst', limit: 50, window_s: 3600 }],
        quota: { daily: 500, monthly: 10_000 },
      }),
    });
    await Promise.all(Array.from({ length: 3 }, () => asTenant(t, '/team/lists')));
    for (let i = 0; i < 3; i++) expect((await asTenant(t, '/team/lists')).res.status).toBe(200);
    const { data, ms } = await waitForHistory(t, 'granularity=hour', (d) => requestsOf(d) >= 6);
    expect(requestsOf(data)).toBe(6);
    expect(ms).toBeLessThan(USAGE_FLUSH_MS + 5_000);
    // The unused units of the ended leases came back with the batch: every meter says 6,
    // as the history does, and the portal's view agrees with the console's.
    const usage = (await envelope(await admin(`/tenants/${t.id}/usage`))).data;
    const used = Object.fromEntries(usage.meters.map((m: any) => [m.name, m.used]));
    expect(used).toEqual({ burst: 6, daily: 6, monthly: 6 });
    const own = await asTenant(t, '/usage');
    expect(own.body.data.meters.map((m: any) => [m.name, m.used])).toEqual(
      usage.meters.map((m: any) => [m.name, m.used]),
    );
  });

  it('counts requests refused before admission under a known token', async () => {
    const t = await createTenant(undefined, 'refusals', ['teams:read']);
    await expectRefusal(await asTenant(t, '/agent/lists'), 'SCOPE_REQUIRED');
    await expectRefusal(await asTenant(t, '/no/such/route'), 'NOT_FOUND');
    await admin(`/tenants/${t.id}/tokens/${t.tokenId}`, { method: 'DELETE' });
    await expectRefusal(await asTenant(t, '/team/lists'), 'TOKEN_REVOKED');
    const { data } = await waitForHistory(
      t,
      'granularity=hour&group_by=route,status,token',
      (d) => requestsOf(d) >= 3,
    );
    const rows = data.series.map((p: any) => [p.route, p.status, p.token, p.requests]);
    expect(rows).toEqual(
      expect.arrayContaining([
        ['agent.list', '4xx', t.tokenId, 1],
        ['unmatched', '4xx', t.tokenId, 1],
        ['team.list', '4xx', t.tokenId, 1],
      ]),
    );
    expect(requestsOf(data)).toBe(3);
  });
});
