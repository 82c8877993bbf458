import { describe, expect, it } from 'vitest';
import { KeyHealth, KeyTable } from './key-health';
import { DEFAULT_RESILIENCE as options } from './resilience-options.fixture';
import { type Ticket, UpstreamHealth } from './upstream-health';

/** A call with this key at `now`: the ticket, or the refusal. */
function call(h: UpstreamHealth, key: string, now: number) {
  return h.admit(key, now);
}

function ticket(h: UpstreamHealth, key: string, now: number): Ticket {
  const t = h.admit(key, now);
  if (!('allowed' in t)) throw new Error(`${key} refused at ${now}: ${JSON.stringify(t)}`);
  return t;
}

/** `n` calls with this key that fail, from `at`, 10 ms apart. */
function failMany(h: UpstreamHealth, key: string, n: number, at: number): void {
  for (let i = 0; i < n; i++) {
    const t = h.admit(key, at + i * 10);
    if ('allowed' in t) h.settle(t, { failed: true }, at + i * 10 + 5);
  }
}

/** The upstream's state 100 ms after `n` failed calls with this key from `at`. */
function stateAfterFailing(h: UpstreamHealth, key: string, n: number, at: number) {
  failMany(h, key, n, at);
  return h.summary(at + 100).state;
}

const succeed = (h: UpstreamHealth, key: string, now: number) =>
  h.settle(ticket(h, key, now), { failed: false }, now);

describe('failure state per platform key', () => {
  it("one key's failures open its own breaker, not another key's", () => {
    const h = new UpstreamHealth(options);
    succeed(h, 'a', 0);
    failMany(h, 'b', 5, 100);
    expect(call(h, 'b', 200)).toEqual({ refused: 'open', scope: 'key', retryAfterMs: 4945 });
    expect('allowed' in call(h, 'a', 200)).toBe(true);
    expect(h.summary(200)).toMatchObject({ state: 'closed', keys: 2, keys_open: 1 });
  });

  it('a single key, however busy, never opens the upstream', () => {
    const h = new UpstreamHealth(options);
    // One key failing for a minute: its breaker opens, probes, fails, opens again.
    for (let t = 0; t < 60_000; t += 50) {
      const x = h.admit('b', t);
      if ('allowed' in x) h.settle(x, { failed: true }, t + 1);
    }
    expect(h.summary(60_000).state).toBe('closed');
    expect('allowed' in call(h, 'a', 60_000)).toBe(true);
  });

  it("one or two keys in use: both failing open both keys' breakers, never the upstream's", () => {
    const h = new UpstreamHealth(options);
    failMany(h, 'a', 5, 0);
    failMany(h, 'b', 5, 0);
    expect(h.summary(100)).toMatchObject({ state: 'closed', keys_open: 2 });
  });

  it('three of six keys failing while three succeed: the healthy keys are never refused', () => {
    const h = new UpstreamHealth(options);
    const healthy = ['h1', 'h2', 'h3'];
    const failing = ['f1', 'f2', 'f3'];
    // All six were working; then three tenants' own calls fail (their data, their account).
    for (const k of [...healthy, ...failing]) succeed(h, k, 0);
    let answered = 0;
    let refused = 0;
    // A minute: the failing keys call in bursts of five every 100 ms, the healthy ones once a second.
    for (let t = 100; t < 60_000; t += 100) {
      for (const k of failing) failMany(h, k, 5, t);
      if (t % 1000 !== 0) continue;
      for (const k of healthy) {
        const x = h.admit(k, t + 60);
        if (!('allowed' in x)) refused++;
        else {
          h.settle(x, { failed: false }, t + 61);
          answered++;
        }
      }
    }
    expect([answered, refused]).toEqual([59 * 3, 0]);
    expect(h.summary(60_000)).toMatchObject({ state: 'closed', keys_open: 3 });
  });

  it('a quiet period: keys that only ever fail hold no key that succeeded, nor a new one', () => {
    const h = new UpstreamHealth(options);
    succeed(h, 'h', 0);
    for (let t = 1000; t < 30_000; t += 50) {
      for (const k of ['f1', 'f2', 'f3', 'f4']) failMany(h, k, 1, t);
    }
    // Four keys failing every call, none answered: that may be the platform, for keys that fail.
    expect(h.summary(30_000).state).toBe('open');
    expect(call(h, 'f1', 30_000)).toMatchObject({ refused: 'open', scope: 'upstream' });
    expect('allowed' in call(h, 'h', 30_000)).toBe(true);
    expect('allowed' in call(h, 'new', 30_000)).toBe(true);
  });

  it('keys that were working stop: it opens once three of their breakers have', () => {
    const h = new UpstreamHealth(options);
    for (const k of ['a', 'b', 'c', 'd']) succeed(h, k, 0);
    failMany(h, 'a', 5, 1000);
    failMany(h, 'b', 5, 1000);
    expect(h.summary(2000).state).toBe('closed');
    expect(stateAfterFailing(h, 'c', 5, 2000)).toBe('open');
    // D's latest call succeeded: it still reaches the platform, once, not as the probe.
    const d = ticket(h, 'd', 2100);
    expect(d.upstreamProbe).toBe(false);
    h.settle(d, { failed: true }, 2200);
    // Its own breaker is closed (one failure), but the upstream's now holds it.
    expect(call(h, 'd', 2300)).toEqual({ refused: 'open', scope: 'upstream', retryAfterMs: 4745 });
    expect(h.summary(2300)).toMatchObject({ keys_open: 3 });
  });

  it('keys that never worked: it opens once the last CIRCUIT_MIN_CALLS calls, of three keys or more, failed', () => {
    const h = new UpstreamHealth(options);
    // Three keys' breakers open after 15 calls: not enough calls, and none of the keys was working.
    for (const k of ['a', 'b', 'c']) failMany(h, k, 5, 0);
    expect(h.summary(100).state).toBe('closed');
    expect(stateAfterFailing(h, 'd', 4, 200)).toBe('closed');
    expect(stateAfterFailing(h, 'd', 1, 300)).toBe('open');
  });

  it("any key's answer, a 4xx too, starts the count afresh", () => {
    const h = new UpstreamHealth(options);
    for (const k of ['a', 'b', 'c', 'd', 'e', 'f']) succeed(h, k, 0);
    failMany(h, 'a', 5, 1000);
    failMany(h, 'b', 5, 1000);
    // A 4xx counts as { failed: false }: the platform answered.
    succeed(h, 'e', 1100);
    expect(stateAfterFailing(h, 'c', 5, 1200)).toBe('closed');
    expect(stateAfterFailing(h, 'd', 5, 1300)).toBe('closed');
    expect(stateAfterFailing(h, 'f', 5, 1400)).toBe('open');
  });

  it('keys whose breakers opened longer than a window ago no longer count', () => {
    const h = new UpstreamHealth(options);
    for (const k of ['a', 'b', 'c']) succeed(h, k, 0);
    failMany(h, 'a', 5, 0);
    failMany(h, 'b', 5, 0);
    expect(stateAfterFailing(h, 'c', 5, 11_000)).toBe('closed');
  });

  it('a key that keeps succeeding goes through while it is open, and its answer closes it', () => {
    const h = new UpstreamHealth(options);
    for (const k of ['a', 'b', 'c', 'd', 'h']) succeed(h, k, 0);
    for (const k of ['a', 'b', 'c']) failMany(h, k, 5, 100);
    failMany(h, 'd', 1, 150);
    expect(h.summary(200).state).toBe('open');
    expect(call(h, 'd', 200)).toMatchObject({ refused: 'open', scope: 'upstream' });
    succeed(h, 'h', 300);
    expect(h.summary(300).state).toBe('closed');
    expect('allowed' in call(h, 'd', 300)).toBe(true);
  });

  it("the upstream's probe closes it and forgets the keys that failed before", () => {
    const h = new UpstreamHealth(options);
    for (const k of ['a', 'b', 'c', 'd', 'e']) succeed(h, k, 0);
    for (const k of ['a', 'b', 'c']) failMany(h, k, 5, 0);
    failMany(h, 'd', 1, 100);
    failMany(h, 'e', 1, 100);
    expect(call(h, 'd', 4000)).toMatchObject({ refused: 'open', scope: 'upstream' });
    // After the cool-down one call of a held key goes through as the probe; others wait for it.
    const probe = ticket(h, 'd', 5100);
    expect(probe.upstreamProbe).toBe(true);
    expect(call(h, 'e', 5101)).toMatchObject({ refused: 'open', scope: 'upstream' });
    h.settle(probe, { failed: false }, 5200);
    expect(h.summary(5200).state).toBe('closed');
    // Key a's own breaker is still cooling down, but one more key stopping is not three.
    expect(stateAfterFailing(h, 'e', 5, 5300)).toBe('closed');
  });

  it("a failed upstream probe opens it for another cool-down; a refused key's probe is given back", () => {
    const h = new UpstreamHealth(options);
    for (const k of ['a', 'b', 'c', 'd']) succeed(h, k, 0);
    for (const k of ['a', 'b', 'c']) failMany(h, k, 5, 0);
    failMany(h, 'd', 1, 100);
    // At 5.1 s key a's own breaker and the upstream's are both half-open: a takes both probes.
    const both = ticket(h, 'a', 5100);
    expect([both.keyProbe, both.upstreamProbe]).toEqual([true, true]);
    // Key b's probe is refused by the upstream (its probe is out): b's is given back.
    expect(call(h, 'b', 5101)).toMatchObject({ refused: 'open', scope: 'upstream' });
    h.settle(both, { failed: true }, 5200);
    expect(call(h, 'd', 5300)).toMatchObject({ refused: 'open', scope: 'upstream' });
    const again = ticket(h, 'b', 10_300);
    expect([again.keyProbe, again.upstreamProbe]).toEqual([true, true]);
  });
});

describe('pauses the platform asks for', () => {
  it("a 503's Retry-After holds that key only, for at most maxPauseMs", () => {
    const h = new UpstreamHealth(options);
    const t = ticket(h, 'b', 0);
    h.settle(t, { failed: true, pause: { kind: 'backoff', seconds: 300 } }, 10);
    expect(call(h, 'b', 1000)).toEqual({
      refused: 'held',
      scope: 'key',
      kind: 'backoff',
      until: 60_010,
    });
    expect('allowed' in call(h, 'a', 1000)).toBe(true);
    expect('allowed' in call(h, 'b', 60_010)).toBe(true);
  });

  it("a 429's holds that key with the rate-limited answer", () => {
    const h = new UpstreamHealth(options);
    h.settle(ticket(h, 'b', 0), { failed: false, pause: { kind: 'rate', seconds: 4 } }, 0);
    expect(call(h, 'b', 100)).toMatchObject({ refused: 'held', scope: 'key', kind: 'rate' });
    expect(h.summary(100)).toMatchObject({ keys_held: 1, held: false });
  });

  it('503s from three keys, none answered between, hold keys whose latest call failed; 429s never', () => {
    const limited = new UpstreamHealth(options);
    for (const k of ['a', 'b', 'c']) {
      limited.settle(
        ticket(limited, k, 0),
        { failed: false, pause: { kind: 'rate', seconds: 9 } },
        0,
      );
    }
    failMany(limited, 'd', 1, 50);
    expect('allowed' in call(limited, 'd', 100)).toBe(true);

    const h = new UpstreamHealth(options);
    succeed(h, 'e', 0);
    const backoff = { failed: true, pause: { kind: 'backoff', seconds: 9 } } as const;
    for (const k of ['a', 'b']) h.settle(ticket(h, k, 10), backoff, 10);
    failMany(h, 'd', 1, 50);
    expect('allowed' in call(h, 'd', 100)).toBe(true);
    h.settle(ticket(h, 'c', 200), backoff, 200);
    expect(call(h, 'd', 300)).toEqual({
      refused: 'held',
      scope: 'upstream',
      kind: 'backoff',
      until: 9200,
    });
    expect(h.summary(300).held).toBe(true);
    // A key whose latest call was answered is not held, and an answer ends the hold.
    h.settle(ticket(h, 'e', 400), { failed: false }, 400);
    expect(h.summary(400).held).toBe(false);
    expect('allowed' in call(h, 'd', 500)).toBe(true);
  });

  it('503s from three keys with an answer between hold no one else', () => {
    const h = new UpstreamHealth(options);
    const backoff = { failed: true, pause: { kind: 'backoff', seconds: 9 } } as const;
    for (const k of ['a', 'b']) h.settle(ticket(h, k, 0), backoff, 0);
    succeed(h, 'e', 100);
    h.settle(ticket(h, 'c', 200), backoff, 200);
    failMany(h, 'd', 1, 250);
    expect(h.summary(300).held).toBe(false);
    expect('allowed' in call(h, 'd', 300)).toBe(true);
  });
});

describe('retries', () => {
  it('a key spends its own budget, and one key never takes all of the upstream reserve', () => {
    const h = new UpstreamHealth(options);
    // A quiet isolate: the upstream reserve is 2/s over 10 s, 20; a key may take half of it.
    let granted = 0;
    for (let i = 0; i < 50; i++) if (h.tryRetry(ticket(h, 'b', i), i)) granted++;
    expect(granted).toBe(10);
    let other = 0;
    for (let i = 0; i < 50; i++) if (h.tryRetry(ticket(h, 'a', 100 + i), 100 + i)) other++;
    expect(other).toBe(10);
    // The upstream's ceiling (20) is now spent: a third key gets none.
    expect(h.tryRetry(ticket(h, 'c', 200), 200)).toBe(false);
  });

  it('never retries a probe, nor while a breaker is open', () => {
    const h = new UpstreamHealth(options);
    failMany(h, 'b', 5, 0);
    const probe = ticket(h, 'b', 5100);
    expect(probe.keyProbe).toBe(true);
    expect(h.tryRetry(probe, 5100)).toBe(false);
  });
});

describe('the key table', () => {
  it('keeps at most its bound, forgetting the least recently used key', () => {
    const make = () => new KeyHealth(options.breaker, options.retry);
    const table = new KeyTable(make, 3);
    const a = table.use('a');
    table.use('b');
    table.use('c');
    expect(table.use('a')).toBe(a);
    table.use('d');
    expect(table.size).toBe(3);
    // b was the least recently used: it comes back as a fresh state.
    expect(table.use('a')).toBe(a);
    const b = table.use('b');
    expect(b.pauseUntil).toBe(0);
    expect(table.size).toBe(3);
  });
});
