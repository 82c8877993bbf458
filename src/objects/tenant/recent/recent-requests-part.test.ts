/**
 * The recent-requests part alone, on node:sqlite with injected time: what a query
 * answers, over any range within what is kept, what a flood of successes leaves of the
 * failures, and what 7 days' age takes away.
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

  it('answers any range within what is kept, newest first by time, a page at a time', () => {
    const { recent } = part();
    const HOUR = 3_600_000;
    // Batches come in as isolates send them: the second holds older requests than the first.
    recent.take([row(T0 - 1 * HOUR, 200), row(T0 - 2 * HOUR, 200)]);
    recent.take([row(T0 - 30 * HOUR, 429), row(T0 - 50 * HOUR, 200), row(T0 - 3 * HOUR, 500)]);
    recent.take([row(T0 - (RECENT_HOURS + 1) * HOUR, 200)]);
    const hoursAgo = (q: Parameters<typeof recent.query>[0]) =>
      recent.query(q).requests.map((r) => (T0 - Date.parse(r.at)) / HOUR);
    expect(hoursAgo({ limit: 10 })).toEqual([1, 2, 3, 30, 50]);
    // A range: both ends in; never past what is kept, even when asked.
    expect(hoursAgo({ limit: 10, from: T0 - 30 * HOUR, to: T0 - 2 * HOUR })).toEqual([2, 3, 30]);
    expect(hoursAgo({ limit: 10, from: T0 - 500 * HOUR, to: T0 - 40 * HOUR })).toEqual([50]);
    expect(hoursAgo({ limit: 10, from: T0 - 48 * HOUR, status: '4xx' })).toEqual([30]);
    // Paged by time: each page takes up where the last one ended.
    const seen: number[] = [];
    let before: Parameters<typeof recent.query>[0]['before'];
    for (;;) {
      const page = recent.query({ limit: 2, before });
      seen.push(...page.requests.map((r) => (T0 - Date.parse(r.at)) / HOUR));
      if (!page.cursor) break;
      before = page.cursor;
    }
    expect(seen).toEqual([1, 2, 3, 30, 50]);
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
