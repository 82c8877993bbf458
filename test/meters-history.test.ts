/**
 * Meters that count what was used (docs/LIMITS.md, "What `used` says"): once traffic
 * stops, every view's `used` (the console's usage, GET /token, GET /usage, hence the
 * portal and the CLI) equals the units of the usage history's billable requests, to the
 * unit, within one flush interval; units on lease show apart as `reserved`. Self-service
 * requests (the portal's reads, a rotation) are in the history, labelled, and spend
 * none of it. Sliding, fixed and exact limits alike. Real time: the test waits for the
 * history to show the requests, never for a fixed pause.
 */
import { describe, expect, it } from 'vitest';
import { USAGE_FLUSH_MS } from '../src/limits/usage-buffer';
import type { Limits } from '../src/metering/policy';
import { admin, asTenant, createTenant, envelope, type TestTenant } from './helpers';

interface Shown {
  name: string;
  limit: number;
  used: number;
  reserved?: number;
  remaining: number;
}

interface Totals {
  requests: number;
  units: number;
  billable: number;
  self_service: number;
}

async function history(t: TestTenant): Promise<Totals> {
  const { data } = await envelope(await admin(`/tenants/${t.id}/analytics?granularity=hour`));
  const sum = (k: keyof Totals) =>
    data.series.reduce((n: number, p: Record<string, number>) => n + (p[k] ?? 0), 0);
  return {
    requests: sum('requests'),
    units: sum('units'),
    billable: sum('billable'),
    self_service: sum('self_service'),
  };
}

/** Asks the history until it holds `requests` requests (the flush timer sends the last batch). */
async function historyOf(t: TestTenant, requests: number): Promise<Totals> {
  const started = Date.now();
  while (Date.now() - started < USAGE_FLUSH_MS + 10_000) {
    const totals = await history(t);
    if (totals.requests >= requests) return totals;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the usage history did not reach ${requests} requests`);
}

const usedOf = (meters: Shown[]) => Object.fromEntries(meters.map((m) => [m.name, m.used]));

const MODES: [string, Partial<Limits>][] = [
  ['sliding', { policies: [{ name: 'burst', limit: 400, window_s: 600 }] }],
  [
    'fixed',
    { policies: [{ name: 'burst', limit: 400, window_s: 3600, algorithm: 'fixed' as const }] },
  ],
  ['exact', { policies: [{ name: 'burst', limit: 400, window_s: 600 }], limiter: 'exact' }],
];

describe('every view says what was used, as the usage history does', () => {
  for (const [mode, limits] of MODES) {
    it(`${mode}: used equals the history's billable units after traffic stops`, async () => {
      const t = await createTenant(undefined, 'meters', ['full', 'usage:read', 'token:rotate']);
      const set = await admin(`/tenants/${t.id}/limits`, {
        method: 'PUT',
        body: JSON.stringify({ quota: { daily: 5000, monthly: 50_000 }, ...limits }),
      });
      expect(set.status).toBe(200);
      // 45 data requests in overlapping waves (isolates lease ahead of demand), the
      // portal's reads between them, and a rotation: the session.
      let data = 0;
      let self = 0;
      for (let wave = 0; wave < 5; wave++) {
        const answers = await Promise.all(
          Array.from({ length: 9 }, () => asTenant(t, wave % 2 ? '/agent/lists' : '/team/lists')),
        );
        for (const a of answers) expect(a.res.status).toBe(200);
        data += answers.length;
        expect((await asTenant(t, '/usage')).res.status).toBe(200);
        self++;
      }
      const rotated = await asTenant(t, '/token/rotate', { method: 'POST', json: {} });
      expect(rotated.res.status).toBe(201);
      self++;

      const totals = await historyOf(t, data + self);
      expect(totals).toEqual({
        requests: data + self,
        units: data,
        billable: data,
        self_service: self,
      });

      // Every view, read now (these reads are self-service: they spend none of it).
      const console = (await envelope(await admin(`/tenants/${t.id}/usage`))).data
        .meters as Shown[];
      const own = (await asTenant(t, '/token')).body.data.meters as Shown[];
      const portal = (await asTenant(t, '/usage')).body.data.meters as Shown[];
      expect(usedOf(console)).toEqual({ burst: data, daily: data, monthly: data });
      expect(usedOf(own)).toEqual(usedOf(console));
      expect(usedOf(portal)).toEqual(usedOf(console));
      // What is held on lease is apart: used, reserved and remaining make the limit.
      for (const m of console) {
        expect(m.reserved, m.name).toBeGreaterThanOrEqual(0);
        expect(m.used + (m.reserved ?? 0) + m.remaining, m.name).toBe(m.limit);
      }
      // The console's usage read and the two views recorded nothing billable.
      const after = await historyOf(t, data + self + 2);
      expect(after.units).toBe(data);
      expect(after.billable).toBe(data);
    }, 60_000);
  }
});
