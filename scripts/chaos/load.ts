/**
 * The chaos script's load: requests at a steady pace (an open loop, so a slow
 * gateway does not slow the load down), each answer noted with when it was
 * sent, how long it took, and what the caller saw.
 */

export interface Answer {
  /** ms since the scenario began, when the request was sent. */
  at: number;
  ms: number;
  status: number;
  code: number | null;
  xCache: string | null;
  staleReason: string | null;
  held: boolean;
  /** Whose state refused it, when the gateway did: `key` or `upstream`. */
  scope: string | null;
}

export interface Emulator {
  url: string;
  fault(spec: Record<string, unknown>): Promise<void>;
  clearFaults(): Promise<void>;
  stats(): Promise<{ requests: Record<string, number>; sessions: number }>;
  calls(): Promise<number>;
}

export function emulatorControl(url: string): Emulator {
  const control = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}/__emulator${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!res.ok) throw new Error(`emulator ${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const stats = () =>
    control('GET', '/stats') as Promise<{ requests: Record<string, number>; sessions: number }>;
  return {
    url,
    fault: async (spec) => void (await control('POST', '/faults', spec)),
    clearFaults: async () => void (await control('DELETE', '/faults')),
    stats,
    calls: async () => Object.values((await stats()).requests).reduce((a, b) => a + b, 0),
  };
}

/** One request as a caller makes it; the answer read whole. */
export async function ask(
  url: string,
  token: string,
  began: number,
  init: RequestInit = {},
): Promise<Answer & { body: string; replayed: boolean }> {
  const at = performance.now() - began;
  const headers = new Headers(init.headers);
  headers.set('authorization', `Bearer ${token}`);
  try {
    const res = await fetch(url, { ...init, headers });
    const body = await res.text();
    let code: number | null = null;
    let held = false;
    let scope: string | null = null;
    try {
      const parsed = JSON.parse(body) as {
        code?: number;
        data?: { held?: boolean; scope?: string };
      };
      code = typeof parsed.code === 'number' ? parsed.code : null;
      held = parsed.data?.held === true;
      scope = typeof parsed.data?.scope === 'string' ? parsed.data.scope : null;
    } catch {
      // Not an envelope: code stays null.
    }
    return {
      at,
      ms: performance.now() - began - at,
      status: res.status,
      code,
      xCache: res.headers.get('x-cache'),
      staleReason: res.headers.get('x-stale-reason'),
      held,
      scope,
      body,
      replayed: res.headers.get('idempotent-replayed') === 'true',
    };
  } catch {
    const ms = performance.now() - began - at;
    return {
      at,
      ms,
      status: 0,
      code: null,
      xCache: null,
      staleReason: null,
      held: false,
      scope: null,
      body: '',
      replayed: false,
    };
  }
}

/** `perSecond` requests a second for `durationMs`, each made by `make(i)`; every answer. */
export async function paced<T extends Answer>(
  perSecond: number,
  durationMs: number,
  make: (i: number) => Promise<T>,
): Promise<T[]> {
  const started = performance.now();
  const every = 1000 / perSecond;
  const pending: Promise<T>[] = [];
  for (let i = 0; i * every < durationMs; i++) {
    const wait = started + i * every - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    pending.push(make(i));
  }
  return Promise.all(pending);
}

/** Runs `work` over `items`, at most `concurrency` at a time, in order of the items. */
export async function pool<T, R>(
  items: readonly T[],
  concurrency: number,
  work: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const lanes = Array.from({ length: concurrency }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i] as T, i);
    }
  });
  await Promise.all(lanes);
  return out;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
