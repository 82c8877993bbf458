import { describe, expect, it } from 'vitest';
import type { LeaseAnswer, LeaseRequest } from '../metering/lease-protocol';
import type { Scope } from '../metering/policy';
import { type LeaseSettings, TenantLease } from './lease';

const NOW = Date.parse('2026-11-24T12:00:00Z');
const scope: Scope = { group: 'teams', tokenId: 'tok_a' };
const settings: LeaseSettings = {
  leaseMaxMs: 1000,
  defaults: { policies: [{ name: 'burst', limit: 100, window_s: 10 }], quota: {} },
  meterOptions: { partitionShare: 1, largestCost: 1 },
  usageRetentionDays: 90,
};

/** What a guard answers: `leased` units of one meter for a second, the waiting request admitted. */
function answer(req: LeaseRequest, leased: number, disabled = false, clockAhead = 0): LeaseAnswer {
  return {
    mode: 'leased',
    disabled,
    cacheVersion: '1',
    start: req.now + clockAhead,
    expiresAt: req.now + clockAhead + 1000,
    scopes: req.scopes.map(() => ({ meters: ['rate:burst'], tokenEnd: null, refusal: null })),
    meters: [
      {
        key: 'rate:burst',
        name: 'burst',
        kind: 'rate',
        limit: 100,
        window_s: 10,
        slot: req.now,
        leased,
        remaining: 100 - leased,
        resetAt: req.now + 10_000,
        fitsAgainAt: null,
      },
    ],
  };
}

describe('TenantLease', () => {
  it('admits from a lease it was given', () => {
    const lease = new TenantLease();
    const req = lease.request(NOW, settings, { scope, cost: 1, queued: 0 });
    expect(lease.apply(req, answer(req, 10), req.now)?.kind).toBe('admitted');
    expect(lease.admit(scope, 1, NOW + 10).kind).toBe('admitted');
  });

  it('drops an answer to a request made before forget(), and gives its units back', () => {
    const lease = new TenantLease();
    const first = lease.request(NOW, settings, { scope, cost: 1, queued: 0 });
    lease.apply(first, answer(first, 10), first.now);
    // A renewal is in flight when an operator change makes this isolate forget the tenant.
    const renewal = lease.request(NOW + 600, settings, null);
    lease.forget();
    expect(lease.apply(renewal, answer(renewal, 10, false), renewal.now)).toBeNull();
    // Nothing of the old answer is used: the next request asks the guard.
    expect(lease.admit(scope, 1, NOW + 700).kind).toBe('ask');
    // The units both leases held go back with the next call.
    const next = lease.request(NOW + 700, settings, { scope, cost: 1, queued: 0 });
    expect(next.returns.reduce((sum, r) => sum + r.units, 0)).toBe(20);
  });

  it('still decides the request that waited on a call made before forget()', () => {
    const lease = new TenantLease();
    const req = lease.request(NOW, settings, { scope, cost: 1, queued: 0 });
    lease.forget();
    expect(lease.apply(req, answer(req, 10), req.now)?.kind).toBe('admitted');
    expect(lease.admit(scope, 1, NOW + 10).kind).toBe('ask');
  });

  it("uses a lease for now at once, though the broker's clock is a few ms ahead", () => {
    const lease = new TenantLease();
    const first = lease.request(NOW, settings, { scope, cost: 1, queued: 0 });
    lease.apply(first, answer(first, 1), first.now);
    expect(lease.admit(scope, 1, NOW + 1).kind).toBe('admitted');
    // The lease is used up; the next call's answer starts by the broker's clock, 3 ms on.
    expect(lease.admit(scope, 1, NOW + 2).kind).toBe('ask');
    const second = lease.request(NOW + 2, settings, { scope, cost: 1, queued: 10 });
    expect(lease.apply(second, answer(second, 10, false, 3), second.now)?.kind).toBe('admitted');
    // It replaces the spent lease now, not once that has run out: before, every
    // request waiting for this call asked again, and each answer parked 10 more units.
    expect(lease.admit(scope, 1, NOW + 3).kind).toBe('admitted');
  });

  it("holds a lease no longer than asked by its own clock, whatever the broker's says", () => {
    const lease = new TenantLease();
    const req = lease.request(NOW, settings, { scope, cost: 1, queued: 0 });
    // The broker's clock is 5 s ahead: its lease of a second is this isolate's [NOW, NOW + 1000).
    lease.apply(req, answer(req, 100, false, 5000), req.now);
    expect(lease.admit(scope, 1, NOW + 999).kind).toBe('admitted');
    expect(lease.admit(scope, 1, NOW + 1000).kind).toBe('ask');
  });

  it('refuses a request dearer than a whole window as the guard would, also while the meter is spent', () => {
    const lease = new TenantLease();
    const req = lease.request(NOW, settings, { scope, cost: 1, queued: 0 });
    const spent = answer(req, 0);
    for (const m of spent.meters) Object.assign(m, { remaining: 0, fitsAgainAt: NOW + 5000 });
    lease.apply(req, spent, req.now);
    // A request of one unit waits for the window; one of 150 never fits a window of 100.
    expect(lease.admit(scope, 1, NOW + 10)).toMatchObject({
      kind: 'refused',
      refusal: { reason: 'rate', violated: 'burst', retryAfter: 5 },
    });
    expect(lease.admit(scope, 150, NOW + 10)).toMatchObject({
      kind: 'refused',
      refusal: { reason: 'too_costly', violated: 'burst', limit: 100 },
    });
  });

  it('keeps the whole lease when its answer took a while (a root call on the way)', () => {
    const lease = new TenantLease();
    const req = lease.request(NOW, settings, { scope, cost: 1, queued: 0 });
    // The broker asked the root first: its lease starts 200 ms on, and arrives 10 ms later.
    lease.apply(req, answer(req, 100, false, 200), NOW + 210);
    expect(lease.admit(scope, 1, NOW + 1199).kind).toBe('admitted');
    expect(lease.admit(scope, 1, NOW + 1200).kind).toBe('ask');
  });
});
