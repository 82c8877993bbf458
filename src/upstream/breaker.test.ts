import { describe, expect, it } from 'vitest';
import { type BreakerOptions, CircuitBreaker } from './breaker';

const options: BreakerOptions = {
  consecutiveFailures: 3,
  failureRatio: 0.5,
  windowMs: 10_000,
  minCalls: 10,
  cooldownMs: 5000,
  probeTimeoutMs: 2000,
};

describe('circuit breaker', () => {
  it('stays closed through failures that are not in a row, below the ratio', () => {
    const b = new CircuitBreaker({ ...options, failureRatio: 0.75 });
    for (let t = 0; t < 8; t++) {
      b.failure(t * 100);
      b.failure(t * 100 + 1);
      b.success(t * 100 + 2);
    }
    expect(b.state(1000)).toBe('closed');
    // The same pattern trips a breaker whose ratio is 0.5: 16 failures in 24 calls.
    const strict = new CircuitBreaker(options);
    for (let t = 0; t < 8; t++) {
      strict.failure(t * 100);
      strict.failure(t * 100 + 1);
      strict.success(t * 100 + 2);
    }
    expect(strict.state(1000)).toBe('open');
  });

  it('opens after N consecutive failures and refuses with the time left', () => {
    const b = new CircuitBreaker(options);
    b.failure(0);
    b.failure(10);
    expect(b.permit(20)).toEqual({ allowed: true, probe: false });
    b.failure(20);
    expect(b.state(21)).toBe('open');
    expect(b.permit(1020)).toEqual({ allowed: false, retryAfterMs: 4000 });
  });

  it('opens on the failure ratio over the window, only once enough calls were seen', () => {
    const b = new CircuitBreaker({ ...options, consecutiveFailures: 100 });
    // 4 failures in 8 calls: ratio reached but too few calls.
    for (let i = 0; i < 4; i++) {
      b.success(i * 10);
      b.failure(i * 10 + 5);
    }
    expect(b.state(100)).toBe('closed');
    b.success(200);
    b.failure(210);
    expect(b.state(211)).toBe('open');
  });

  it('forgets outcomes older than the window', () => {
    const b = new CircuitBreaker({ ...options, consecutiveFailures: 100 });
    for (let i = 0; i < 9; i++) b.failure(i);
    // 11 s later the nine failures are gone: one more failure among two calls is not enough.
    b.success(11_000);
    b.failure(11_001);
    expect(b.state(11_002)).toBe('closed');
  });

  it('half-open lets exactly one probe through; success closes it', () => {
    const b = new CircuitBreaker(options);
    for (let i = 0; i < 3; i++) b.failure(i);
    expect(b.state(5002)).toBe('half-open');
    expect(b.permit(5002)).toEqual({ allowed: true, probe: true });
    expect(b.permit(5003).allowed).toBe(false);
    expect(b.permit(5004).allowed).toBe(false);
    b.success(5100);
    expect(b.state(5100)).toBe('closed');
    expect(b.permit(5101)).toEqual({ allowed: true, probe: false });
  });

  it('a failed probe opens it for another cool-down', () => {
    const b = new CircuitBreaker(options);
    for (let i = 0; i < 3; i++) b.failure(i);
    expect(b.permit(6000)).toEqual({ allowed: true, probe: true });
    b.failure(6100);
    expect(b.state(6100)).toBe('open');
    expect(b.permit(11_000)).toEqual({ allowed: false, retryAfterMs: 100 });
    expect(b.permit(11_100)).toEqual({ allowed: true, probe: true });
  });

  it('a probe that never reports back frees the slot after its timeout', () => {
    const b = new CircuitBreaker(options);
    for (let i = 0; i < 3; i++) b.failure(i);
    expect(b.permit(5002).allowed).toBe(true);
    expect(b.permit(7001).allowed).toBe(false);
    expect(b.permit(7002)).toEqual({ allowed: true, probe: true });
  });
});

describe('circuit breaker: counting and the probe', () => {
  it('counts the window in two halves: the last half always, nothing older than the window', () => {
    const b = new CircuitBreaker({ ...options, consecutiveFailures: 100, minCalls: 4 });
    // Three failures 4 s ago (in the half before this one) and one now: four in the window.
    for (let i = 0; i < 3; i++) b.failure(6000 + i);
    expect(b.failure(10_000)).toBe(true);
    const late = new CircuitBreaker({ ...options, consecutiveFailures: 100, minCalls: 4 });
    // The same three failures, then 10.5 s later one more: the three are past the window.
    for (let i = 0; i < 3; i++) late.failure(6000 + i);
    expect(late.failure(16_500)).toBe(false);
    expect(late.state(16_500)).toBe('closed');
  });

  it('says which failure opened it, and a tripped breaker cools down like any other', () => {
    const b = new CircuitBreaker(options);
    expect([b.failure(0), b.failure(1), b.failure(2), b.failure(3)]).toEqual([
      false,
      false,
      true,
      false,
    ]);
    const t = new CircuitBreaker(options);
    t.trip(100);
    expect(t.permit(200)).toEqual({ allowed: false, retryAfterMs: 4900 });
    expect(t.permit(5100)).toEqual({ allowed: true, probe: true });
  });

  it('a probe given back lets the next call probe', () => {
    const b = new CircuitBreaker(options);
    for (let i = 0; i < 3; i++) b.failure(i);
    expect(b.permit(5002)).toEqual({ allowed: true, probe: true });
    expect(b.permit(5003).allowed).toBe(false);
    b.releaseProbe();
    expect(b.permit(5004)).toEqual({ allowed: true, probe: true });
  });
});
