/**
 * The traffic shapes the simulation runs (issue 22): each is a set of
 * tenants, with limits, demand over time and where it comes from, and the
 * operator actions taken during the run.
 */
import { DEFAULT_LIMITS, type Limits } from '../../src/metering/policy';
import type { Region } from './world';

export interface TenantSpec {
  id: string;
  limits: Limits;
  /** Tokens sending its traffic, in equal shares; the first may be revoked. */
  tokens: string[];
  /** Requests a second at `t` ms from the start, all data centers together. */
  demand: (t: number) => number;
  /** Share of the demand a data center sends (by index); even over all when absent. */
  weight?: (dc: { index: number; region: Region }) => number;
}

export interface OperatorAction {
  at: number;
  tenant: string;
  kind: 'revoke' | 'disable';
  /** The token revoked (revoke). */
  token?: string;
}

/** Clients of one tenant that send again as soon as they have an answer (retry storms). */
export interface ClientLoop {
  tenant: string;
  count: number;
  /** The data center they reach (by index). */
  dc: number;
  /** Round trip between a client and the gateway, ms. */
  rttMs: number;
  /** Pause after a success before the next request, ms. */
  thinkMs: number;
  /** When the first client starts, ms from the start (the others 1 ms apart). */
  startMs: number;
  /** Whether a refused client waits for its Retry-After, or sends again at once. */
  honourRetryAfter: boolean;
}

export interface Scenario {
  name: string;
  /** What the scenario shows, one line. */
  about: string;
  seconds: number;
  tenants: TenantSpec[];
  actions: OperatorAction[];
  /** Clients in a loop, besides the tenants' open-loop demand. */
  clients?: ClientLoop[];
  /** Waits are measured from here on (ms): first calls per region and token are a one-off. */
  warmupMs?: number;
  /** Utilisation is measured over windows ending in [from, to] ms, all inside saturated demand. */
  saturated?: { from: number; to: number };
}

const minute = (limit: number): Limits => ({
  policies: [{ name: 'per-minute', limit, window_s: 60 }],
  quota: {},
});

const steady = (rate: number) => () => rate;

export function scenarios(quick: boolean): Scenario[] {
  const s = quick ? 0.5 : 1;
  const secs = (n: number) => Math.round(n * s);
  return [
    {
      name: 'steady',
      about: 'one tenant at 2x its 60,000/min limit from every data center',
      // Not shortened by --quick: utilisation needs windows wholly past the first one.
      seconds: 150,
      tenants: [
        {
          id: 'steady',
          limits: minute(60_000),
          tokens: ['tok_a', 'tok_b'],
          demand: steady(2000),
        },
      ],
      // Utilisation: windows that lie wholly in steady, saturated demand (past the first
      // window, before the revocation halves the demand).
      actions: [{ at: 140_000, tenant: 'steady', kind: 'revoke', token: 'tok_b' }],
      saturated: { from: 90_000, to: 140_000 },
    },
    {
      name: 'diurnal',
      about: 'one tenant from 0.2x to 2x its limit and back, a day in 2 minutes',
      seconds: secs(120),
      tenants: [
        {
          id: 'diurnal',
          limits: minute(30_000),
          tokens: ['tok_a', 'tok_b'],
          demand: (t) => 500 * (1.1 - 0.9 * Math.cos((2 * Math.PI * t) / (secs(120) * 1000))),
        },
      ],
      actions: [{ at: secs(60) * 1000, tenant: 'diurnal', kind: 'revoke', token: 'tok_b' }],
    },
    {
      name: 'flash crowd',
      about: 'idle, then 0 to 10x a 6,000/min limit within 1 s, from every data center',
      seconds: secs(20),
      tenants: [
        {
          id: 'flash',
          limits: { policies: [{ name: 'per-second', limit: 100, window_s: 1 }], quota: {} },
          tokens: ['tok_a', 'tok_b'],
          demand: (t) => (t < 5000 ? 0 : 1000 * Math.min(1, (t - 5000) / 1000)),
        },
      ],
      actions: [{ at: secs(15) * 1000, tenant: 'flash', kind: 'revoke', token: 'tok_b' }],
      saturated: { from: 6000, to: 7000 },
    },
    {
      name: 'hot data center',
      about: 'one tenant at 2x its limit, 90 % of it from one data center',
      // Not shortened by --quick, and measured as steady is.
      seconds: 150,
      tenants: [
        {
          id: 'hot',
          limits: minute(12_000),
          tokens: ['tok_a', 'tok_b'],
          demand: steady(400),
          weight: (dc) => (dc.index === 120 ? 0.9 * 300 : 0.1 * (300 / 299)),
        },
      ],
      actions: [{ at: 140_000, tenant: 'hot', kind: 'revoke', token: 'tok_b' }],
      saturated: { from: 90_000, to: 140_000 },
    },
    {
      name: 'thin spread',
      about: 'one tenant at 50 % of a 600/min limit over 300 data centers (browser users)',
      seconds: secs(240),
      tenants: [{ id: 'thin', limits: minute(600), tokens: ['tok_a', 'tok_b'], demand: steady(5) }],
      actions: [{ at: secs(200) * 1000, tenant: 'thin', kind: 'revoke', token: 'tok_b' }],
      // A region's first request of each token waits for the root once: nothing is known
      // there yet. The goal is about the steady state after it.
      warmupMs: 20_000,
    },
    {
      name: 'global 1M/min',
      about: 'one tenant at 1.2x a 1,000,000/min limit from every data center',
      seconds: secs(30),
      tenants: [
        {
          id: 'global',
          limits: minute(1_000_000),
          tokens: ['tok_a', 'tok_b'],
          demand: steady(20_000),
        },
      ],
      actions: [{ at: secs(20) * 1000, tenant: 'global', kind: 'revoke', token: 'tok_b' }],
    },
    retryStorm(secs(60), false),
    retryStorm(secs(60), true),
    zipfMix(secs(60)),
  ];
}

/**
 * A partner's 20 clients in one data center, on the default limits (burst 20 per
 * 10 s), each sending again at once on every 429 (a retry loop), or waiting for
 * its Retry-After; one token revoked two thirds in.
 */
function retryStorm(seconds: number, honourRetryAfter: boolean): Scenario {
  return {
    name: honourRetryAfter ? 'retry storm, Retry-After' : 'retry storm',
    about: honourRetryAfter
      ? "20 clients at the default limits, each waiting for a 429's Retry-After"
      : '20 clients at the default limits, each sending again at once on every 429',
    seconds,
    tenants: [
      {
        id: 'storm',
        limits: DEFAULT_LIMITS,
        tokens: ['tok_a', 'tok_b'],
        demand: () => 0,
      },
    ],
    clients: [
      {
        tenant: 'storm',
        count: 20,
        dc: 120,
        rttMs: 20,
        thinkMs: 0,
        startMs: 1000,
        honourRetryAfter,
      },
    ],
    actions: [
      { at: Math.round((seconds * 1000 * 2) / 3), tenant: 'storm', kind: 'revoke', token: 'tok_b' },
    ],
  };
}

/**
 * 40 tenants with limits from 10/min to 1,000,000/min (log-spaced) and demand
 * in Zipf proportions (the busiest at 1.5x its limit), one disabled midway. A
 * tenant sends at most ZIPF_MAX_RATE requests a second: the nine largest would
 * otherwise send 33,000 of the 36,600 a second, all far under their limits (the
 * global tenant's scenario shows such a tenant), and the run would not finish in
 * its time.
 */
const ZIPF_MAX_RATE = 1000;

function zipfMix(seconds: number): Scenario {
  const count = 40;
  const tenants: TenantSpec[] = [];
  for (let i = 0; i < count; i++) {
    const limit = Math.round(10 * 10 ** ((5 * i) / (count - 1)));
    // Rank by limit, largest first; demand falls as 1/rank^1.1 relative to the limit.
    const rank = count - i;
    const load = 1.5 / rank ** 0.3;
    tenants.push({
      id: `zipf-${String(i).padStart(2, '0')}`,
      limits: minute(limit),
      tokens: ['tok_a', 'tok_b'],
      demand: steady(Math.min(ZIPF_MAX_RATE, (limit / 60) * load)),
    });
  }
  return {
    name: 'zipf mix',
    about: '40 tenants, limits 10/min to 1M/min, Zipf demand; one disabled, one revoked',
    seconds,
    tenants,
    actions: [
      { at: (seconds * 1000) / 2, tenant: 'zipf-30', kind: 'disable' },
      { at: (seconds * 1000) / 2, tenant: 'zipf-35', kind: 'revoke', token: 'tok_b' },
    ],
  };
}
