import { describe, expect, it } from 'vitest';
import type { LeaseAnswer, LeaseRequest, MeterGrant } from '../metering/lease-protocol';
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

/** A new lease and its first request: one unit for `scope` at NOW, `queued` more waiting. */
function firstAsk(queued = 0): { lease: TenantLease; req: LeaseRequest } {
  const lease = new TenantLease();
  return { lease, req: lease.request(NOW, settings, { scope, cost: 1, queued }) };
}

/** The settings' one meter (100 per 10 s) as a guard grants it, in the slot of `req`. */
function burstGrant(
  req: LeaseRequest,
  fields: Pick<MeterGrant, 'leased' | 'remaining' | 'resetAt' | 'fitsAgainAt'>,
): MeterGrant {
  return {
    key: 'rate:burst',
    name: 'burst',
    kind: 'rate',
    limit: 100,
    window_s: 10,
    slot: req.now,
    ...fields,
  };
}

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
      burstGrant(req, {
        leased,
        remaining: 100 - leased,
        resetAt: req.now + 10_000,
        fitsAgainAt: null,
      }),
    ],
  };
}

describe('TenantLease', () => {
  it('admits from a lease it was given', () => {
    const { lease, req } = firstAsk();
    expect(lease.apply(req, answer(req, 10), req.now)?.kind).toBe('admitted');
    expect(lease.admit(scope, 1, NOW + 10).kind).toBe('admitted');
  });

  it('drops an answer to a request made before forget(), and gives its units back', () => {
    const { lease, req: first } = firstAsk();
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
    const { lease, req } = firstAsk();
    lease.forget();
    expect(lease.apply(req, answer(req, 10), req.now)?.kind).toBe('admitted');
    expect(lease.admit(scope, 1, NOW + 10).kind).toBe('ask');
  });

  it("uses a lease for now at once, though the broker's clock is a few ms ahead", () => {
    const { lease, req: first } = firstAsk();
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
    const { lease, req } = firstAsk();
    // The broker's clock is 5 s ahead: its lease of a second is this isolate's [NOW, NOW + 1000).
    lease.apply(req, answer(req, 100, false, 5000), req.now);
    expect(lease.admit(scope, 1, NOW + 999).kind).toBe('admitted');
    expect(lease.admit(scope, 1, NOW + 1000).kind).toBe('ask');
  });

  it('refuses a request dearer than a whole window as the guard would, also while the meter is spent', () => {
    const { lease, req } = firstAsk();
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
    const { lease, req } = firstAsk();
    // The broker asked the root first: its lease starts 200 ms on, and arrives 10 ms later.
    lease.apply(req, answer(req, 100, false, 200), NOW + 210);
    expect(lease.admit(scope, 1, NOW + 1199).kind).toBe('admitted');
    expect(lease.admit(scope, 1, NOW + 1200).kind).toBe('ask');
  });
});

/**
 * What a guard answers when the window is full: the waiting request refused (or, with
 * `admitted`, the last unit taken by it), nothing leased, the lease cut short by the
 * slot's end (`slotEnds`, ms on), and the meter full until `fitsIn` ms on.
 */
function full(
  req: LeaseRequest,
  {
    fitsIn,
    slotEnds = 50,
    mode = 'leased',
    admitted = false,
    leased = 0,
    clockAhead = 0,
  }: {
    fitsIn: number;
    slotEnds?: number;
    mode?: 'leased' | 'exact';
    admitted?: boolean;
    /** Units of the full window leased with the answer (its last ones). */
    leased?: number;
    /** The answering broker's clock runs this far ahead of the isolate's. */
    clockAhead?: number;
  },
): LeaseAnswer {
  const now = req.now + clockAhead;
  const fitsAgainAt = now + fitsIn;
  return {
    mode,
    disabled: false,
    cacheVersion: '1',
    start: now,
    expiresAt: mode === 'exact' ? now : now + slotEnds,
    scopes: req.scopes.map((_, i) => ({
      meters: ['rate:burst'],
      tokenEnd: null,
      refusal:
        i === 0 && (req.scopes[0]?.cost ?? 0) > 0 && !admitted
          ? { reason: 'rate' as const, violated: 'burst', retryAfter: Math.ceil(fitsIn / 1000) }
          : null,
    })),
    meters: [burstGrant(req, { leased, remaining: 0, resetAt: now + 10_000, fitsAgainAt })],
  };
}

/** A lease whose first request (one unit at NOW) the guard answered with `full(…)`, and what it decided. */
function leaseAfterFull(options: Parameters<typeof full>[1]) {
  const { lease, req } = firstAsk();
  const decision = lease.apply(req, full(req, options), NOW);
  return { lease, decision };
}

describe('TenantLease: refusal leases', () => {
  it('refuses a full window here after its lease has ended, until the window frees, then asks', () => {
    // The guard refuses: full for another 700 ms, its lease cut to 50 ms by the slot's end.
    const { lease, decision: guard } = leaseAfterFull({ fitsIn: 700 });
    expect(guard).toMatchObject({ kind: 'refused', refusal: { reason: 'rate', retryAfter: 1 } });
    // Past the lease, before the window frees: the same refusal and fields, no call.
    expect(lease.admit(scope, 1, NOW + 400)).toEqual(guard);
    expect(lease.admit(scope, 1, NOW + 699).kind).toBe('refused');
    // Once a unit can have freed, the guard decides again.
    expect(lease.admit(scope, 1, NOW + 700).kind).toBe('ask');
  });

  it('after taking the last unit, refuses the next requests without asking', () => {
    const { lease, req } = firstAsk();
    expect(lease.apply(req, full(req, { fitsIn: 300, admitted: true }), NOW)?.kind).toBe(
      'admitted',
    );
    expect(lease.admit(scope, 1, NOW + 100)).toMatchObject({
      kind: 'refused',
      refusal: { reason: 'rate', violated: 'burst', retryAfter: 1 },
    });
  });

  it('holds a refusal no longer than one lease time, however long the window stays full', () => {
    // Full for an hour (a quota): a raised limit must still be seen within LEASE_MAX_MS.
    const { lease } = leaseAfterFull({ fitsIn: 3_600_000 });
    expect(lease.admit(scope, 1, NOW + 999)).toMatchObject({
      kind: 'refused',
      refusal: { retryAfter: 3600 },
    });
    expect(lease.admit(scope, 1, NOW + 1000).kind).toBe('ask');
  });

  it('ends at once when an operator change makes this isolate forget the tenant', () => {
    const { lease } = leaseAfterFull({ fitsIn: 700 });
    expect(lease.admit(scope, 1, NOW + 100).kind).toBe('refused');
    // New limits set through this isolate (admin/common.ts): the next request asks.
    lease.forget();
    expect(lease.admit(scope, 1, NOW + 101).kind).toBe('ask');
  });

  it('exact mode: a known-full window is refused here; any other request asks', () => {
    const { lease } = leaseAfterFull({ fitsIn: 700, mode: 'exact' });
    expect(lease.admit(scope, 1, NOW + 10)).toMatchObject({
      kind: 'refused',
      refusal: { reason: 'rate', violated: 'burst' },
    });
    // A request dearer than the whole window is refused as the guard would; a cost-0 one asks.
    expect(lease.admit(scope, 150, NOW + 10)).toMatchObject({
      kind: 'refused',
      refusal: { reason: 'too_costly', violated: 'burst', limit: 100 },
    });
    expect(lease.admit(scope, 0, NOW + 10).kind).toBe('ask');
    expect(lease.admit(scope, 1, NOW + 700).kind).toBe('ask');
    // With room in the window, exact mode asks for every request, as before.
    const room = lease.request(NOW + 800, settings, { scope, cost: 1, queued: 0 });
    const roomy = full(room, { fitsIn: 0, mode: 'exact', admitted: true });
    for (const m of roomy.meters) Object.assign(m, { remaining: 5, fitsAgainAt: null });
    lease.apply(room, roomy, NOW + 800);
    expect(lease.admit(scope, 1, NOW + 801).kind).toBe('ask');
  });

  it("refuses until the window frees by its own clock, though the broker's runs ahead", () => {
    // The broker's clock is 500 ms ahead: full for 300 ms by its clock is until NOW + 300 here.
    const { lease } = leaseAfterFull({ fitsIn: 300, clockAhead: 500 });
    expect(lease.admit(scope, 1, NOW + 299).kind).toBe('refused');
    expect(lease.admit(scope, 1, NOW + 300).kind).toBe('ask');
  });

  it('asks, rather than refuses, while units of the full meter it held wait to go back', () => {
    const { lease, req } = firstAsk(10);
    // Its lease (cut to 200 ms by the slot's end) holds the window's last 10 units.
    lease.apply(req, full(req, { fitsIn: 5000, slotEnds: 200, admitted: true, leased: 10 }), NOW);
    expect(lease.admit(scope, 1, NOW + 10).kind).toBe('admitted');
    // The lease has ended with 9 units unused: the guard counts them until they come back,
    // so its "full" is partly this isolate's own units. The next request takes them back.
    expect(lease.admit(scope, 1, NOW + 300).kind).toBe('ask');
    const next = lease.request(NOW + 300, settings, { scope, cost: 1, queued: 0 });
    expect(next.returns).toEqual([{ meter: 'rate:burst', slot: NOW, units: 9 }]);
  });

  it('does not renew ahead a lease whose windows are full past its end: the refusal lease follows it', () => {
    // Full for 700 ms; the lease holds nothing and ends with its slot, 50 ms on.
    const { lease } = leaseAfterFull({ fitsIn: 700 });
    expect(lease.renewal(NOW + 40, settings)).toBeNull();
    // Past the lease, still refused without a call; once the window can free, a request asks.
    expect(lease.admit(scope, 1, NOW + 60).kind).toBe('refused');
    expect(lease.admit(scope, 1, NOW + 700).kind).toBe('ask');
  });

  it('renews ahead a lease whose window frees before its end', () => {
    const { lease } = leaseAfterFull({ fitsIn: 30, slotEnds: 50 });
    expect(lease.renewal(NOW + 40, settings)).toBe('ahead');
  });

  it('renews ahead a full lease while units of its meter wait to go back', () => {
    const { lease } = leaseAfterFull({ fitsIn: 700, slotEnds: 200, admitted: true, leased: 10 });
    expect(lease.admit(scope, 1, NOW + 10).kind).toBe('admitted');
    // A renewal's answer (full, nothing leased) replaces that lease: its 9 units go back
    // with the next call, and the guard counts them until then.
    const renewal = lease.request(NOW + 100, settings, null);
    lease.apply(renewal, full(renewal, { fitsIn: 600 }), NOW + 100);
    expect(lease.renewal(NOW + 140, settings)).toBe('ahead');
  });

  it('renews ahead a full lease whose refusal lease would end before the window frees', () => {
    // Full for 3 s (a minute's window in 3 s slots); the refusal lease lasts 1 s.
    const { lease } = leaseAfterFull({ fitsIn: 3000, slotEnds: 500 });
    expect(lease.renewal(NOW + 400, settings)).toBe('ahead');
  });

  it("counts requests refused while the window is full in the scope's next want, at most at its rate", () => {
    const { lease } = leaseAfterFull({ fitsIn: 500 });
    // 100 requests refused here over 500 ms (200 a second): unmet demand, not none; but
    // the refusing window (100 per 10 s) frees at most 10 a second, so 10 a second count.
    for (let i = 0; i < 100; i++) expect(lease.admit(scope, 1, NOW + 5 * i).kind).toBe('refused');
    const next = lease.request(NOW + 500, settings, { scope, cost: 1, queued: 0 });
    // Twice the expected use over a lease of LEASE_MAX_MS (1 s): 2 × 10.
    expect(next.scopes[0]?.want).toBe(20);
  });

  it('counts nothing for requests refused by a quota', () => {
    const { lease, req } = firstAsk();
    const answer = full(req, { fitsIn: 500 });
    for (const m of answer.meters) m.kind = 'quota';
    for (const s of answer.scopes) {
      if (s.refusal) s.refusal = { reason: 'quota', violated: 'burst', retryAfter: 1 };
    }
    lease.apply(req, answer, NOW);
    for (let i = 0; i < 100; i++) expect(lease.admit(scope, 1, NOW + 5 * i).kind).toBe('refused');
    const next = lease.request(NOW + 500, settings, { scope, cost: 1, queued: 0 });
    expect(next.scopes[0]?.want).toBe(0);
  });
});
