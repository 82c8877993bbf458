/**
 * The recent-requests part alone, on node:sqlite with injected time: what a query
 * answers, what a flood of successes leaves of the failures, and what a day's age
 * takes away.
 */
import { describe, expect, it } from 'vitest';
import { memorySql } from '../../../../scripts/sim/sqlite';
import type { RequestRow } from '../../../metering/usage';
import { RECENT_HOURS, RECENT_KEPT, RecentRequestsPart } from './recent-requests-part';

const T0 = Date.parse('2026-11-24T12:00:00Z');

function row(at: number, status: number, extra: Partial<RequestRow> = {}): RequestRow {
  return {
    at,
    request_id: `req-${at}-${status}`,
    token_id: 'tok_a',
    operation: 'team.list',
    method: 'GET',
    status,
    code: status === 429 ? 42901 : 0,
    limiter: status === 429 ? 'refused' : 'admitted',
    policy: status === 429 ? 'burst' : null,
    cache: null,
    upstream_status: status === 429 ? null : status,
    upstream_attempts: status === 429 ? null : 1,
    latency_ms: 5,
    upstream_ms: null,
    trace_id: null,
    ...extra,
  };
}

/** The part with a clock the test moves. */
function part() {
  const clock = { now: T0 };
  return { clock, recent: new RecentRequestsPart(memorySql(), () => clock.now) };
}

describe('the recent-requests part', () => {
  it('answers newest first, filtered, a page at a time', () => {
    const { recent } = part();
    recent.take([
      row(T0 - 3000, 200),
      row(T0 - 2000, 429),
      row(T0 - 1000, 503, { token_id: 'tok_b', operation: 'agent.create', method: 'POST' }),
    ]);
    const ids = (q: Parameters<typeof recent.query>[0]) =>
      recent.query(q).requests.map((r) => r.request_id);
    expect(ids({ limit: 10 })).toEqual([
      `req-${T0 - 1000}-503`,
      `req-${T0 - 2000}-429`,
      `req-${T0 - 3000}-200`,
    ]);
    expect(ids({ limit: 10, failedOnly: true })).toHaveLength(2);
    expect(ids({ limit: 10, status: '4xx' })).toEqual([`req-${T0 - 2000}-429`]);
    expect(ids({ limit: 10, tokenId: 'tok_b', operation: 'agent.create' })).toHaveLength(1);
    const first = recent.query({ limit: 2 });
    expect(first.requests).toHaveLength(2);
    expect(first.requests[0]?.at).toBe(new Date(T0 - 1000).toISOString());
    expect(ids({ limit: 2, before: first.cursor ?? undefined })).toEqual([`req-${T0 - 3000}-200`]);
  });

  it('keeps the newest RECENT_KEPT of each kind: a flood of successes leaves the refusals', () => {
    const { recent } = part();
    recent.take([row(T0 - 10_000, 429)]);
    recent.take(Array.from({ length: RECENT_KEPT + 5 }, (_, i) => row(T0 - 5000 + i, 200)));
    expect(recent.query({ limit: 10, failedOnly: true }).requests).toHaveLength(1);
    const answered = recent.query({ limit: RECENT_KEPT + 10, status: '2xx' }).requests;
    expect(answered).toHaveLength(RECENT_KEPT);
    expect(answered.at(-1)?.at).toBe(new Date(T0 - 5000 + 5).toISOString());
  });

  it('answers nothing older than RECENT_HOURS, and the sweep deletes it', () => {
    const { clock, recent } = part();
    recent.take([row(T0, 200), row(T0 + 1000, 500)]);
    clock.now = T0 + RECENT_HOURS * 3_600_000 + 500;
    expect(recent.query({ limit: 10 }).requests.map((r) => r.status)).toEqual([500]);
    recent.sweep(clock.now);
    clock.now = T0;
    expect(recent.query({ limit: 10 }).requests.map((r) => r.status)).toEqual([500]);
  });
});
