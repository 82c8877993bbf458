/**
 * `npm run smoke -- https://gw.example.com`: a few read-only requests that
 * show a deployed gateway works end to end (docs/DEPLOY.md). A tenant token
 * comes from SMOKE_TOKEN (never printed; a read-only token is enough: it
 * needs teams:read); SMOKE_ORIGIN, an origin that tenant allows, adds the
 * CORS preflight check. Prints PASS, FAIL or SKIP per check; exits 1 when any
 * check fails, 2 on a usage error.
 *
 *   healthz       GET /healthz answers 200, code 0, status ok
 *   cached read   GET /team/lists?page_size=<random 1..100>: MISS (sent with
 *                 Cache-Control: no-cache), then HIT for the same URL
 *   rate limits   RateLimit and RateLimit-Policy on those answers
 *   bad input     ?page_size=500 is refused: 400, code 40001, with the request id
 *   cors          OPTIONS preflight from SMOKE_ORIGIN: 204 and Access-Control-Allow-Origin
 */
import { randomInt } from 'node:crypto';

const USAGE = `Usage: SMOKE_TOKEN=<tenant token> [SMOKE_ORIGIN=https://app.example.com] npm run smoke -- <gateway URL>`;
const TIMEOUT_MS = 15_000;

interface Answer {
  status: number;
  headers: Headers;
  body: { code?: unknown; msg?: unknown; data?: any } | undefined;
  ms: number;
}

type Outcome = { ok: boolean; detail: string } | { skip: string };

const target = process.argv[2];
const token = process.env.SMOKE_TOKEN ?? '';
const origin = process.env.SMOKE_ORIGIN;
if (target === '--help' || target === '-h') {
  console.log(USAGE);
  process.exit(0);
}
if (!target) {
  console.error(USAGE);
  process.exit(2);
}
if (!token) {
  console.error(`SMOKE_TOKEN is not set: a tenant token with teams:read.\n${USAGE}`);
  process.exit(2);
}
let base: string;
try {
  const url = new URL(target);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error();
  base = url.origin + url.pathname.replace(/\/+$/, '');
} catch {
  console.error(`Not an http(s) URL: ${target}\n${USAGE}`);
  process.exit(2);
}

/** A request to the gateway; its body parsed when it is JSON. Never throws. */
async function call(path: string, init: RequestInit = {}): Promise<Answer | Error> {
  const started = performance.now();
  try {
    const res = await fetch(`${base}${path}`, {
      ...init,
      redirect: 'manual',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const text = await res.text();
    let body: Answer['body'];
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    return { status: res.status, headers: res.headers, body, ms: performance.now() - started };
  } catch (err) {
    if ((err as Error).name === 'TimeoutError') return new Error('no answer within 15 s');
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message;
    return new Error(`${(err as Error).message}${why ? ` (${why})` : ''}`);
  }
}

const auth = { authorization: `Bearer ${token}` };
const describe = (a: Answer) =>
  `HTTP ${a.status}${a.body && typeof a.body.code === 'number' ? `, code ${a.body.code}` : ''}${
    a.body && typeof a.body.msg === 'string' && a.body.code !== 0 ? ` "${a.body.msg}"` : ''
  }`;
const ms = (a: Answer) => `${Math.round(a.ms)} ms`;

async function healthz(): Promise<Outcome> {
  const a = await call('/healthz');
  if (a instanceof Error) return { ok: false, detail: a.message };
  const ok = a.status === 200 && a.body?.code === 0 && a.body?.data?.status === 'ok';
  return {
    ok,
    detail: ok
      ? `${describe(a)}, ${ms(a)}`
      : `want HTTP 200, code 0, status ok; got ${describe(a)}`,
  };
}

let cachedAnswers: Answer[] = [];

async function cachedRead(): Promise<Outcome> {
  // A page size this run is unlikely to share with another, so the first read is a real miss.
  const path = `/team/lists?page_size=${randomInt(1, 101)}`;
  const first = await call(path, { headers: { ...auth, 'cache-control': 'no-cache' } });
  if (first instanceof Error) return { ok: false, detail: first.message };
  if (first.status !== 200 || first.body?.code !== 0) {
    return { ok: false, detail: `GET ${path}: want HTTP 200, code 0; got ${describe(first)}` };
  }
  const second = await call(path, { headers: auth });
  if (second instanceof Error) return { ok: false, detail: second.message };
  cachedAnswers = [first, second];
  const xc = [first.headers.get('x-cache'), second.headers.get('x-cache')];
  const ok = second.status === 200 && xc[0] === 'MISS' && xc[1] === 'HIT';
  return {
    ok,
    detail: ok
      ? `GET ${path}: MISS ${ms(first)}, then HIT ${ms(second)}`
      : `GET ${path}: want X-Cache MISS then HIT; got ${xc[0] ?? '(none)'} then ${xc[1] ?? '(none)'} (${describe(second)})${
          xc[1] === 'MISS'
            ? ': is the gateway on a custom domain? The Cache API does nothing on workers.dev'
            : ''
        }`,
  };
}

async function rateLimits(): Promise<Outcome> {
  if (cachedAnswers.length === 0) return { skip: 'no successful read to look at' };
  const missing = cachedAnswers.flatMap((a, i) =>
    ['RateLimit', 'RateLimit-Policy']
      .filter((h) => !a.headers.get(h))
      .map((h) => `${h} on answer ${i + 1}`),
  );
  if (missing.length > 0) return { ok: false, detail: `missing ${missing.join(', ')}` };
  return {
    ok: true,
    detail: `RateLimit-Policy: ${cachedAnswers[1]!.headers.get('ratelimit-policy')}`,
  };
}

async function badInput(): Promise<Outcome> {
  const a = await call('/team/lists?page_size=500', { headers: auth });
  if (a instanceof Error) return { ok: false, detail: a.message };
  const rid = a.body?.data?.request_id;
  const ok =
    a.status === 400 &&
    a.body?.code === 40001 &&
    typeof rid === 'string' &&
    rid.length > 0 &&
    a.headers.get('x-request-id') === rid;
  return {
    ok,
    detail: ok
      ? `?page_size=500: HTTP 400, code 40001, request id ${rid}`
      : `?page_size=500: want HTTP 400, code 40001 and the request id in the body and X-Request-ID; got ${describe(a)}, request id ${rid ?? '(none)'}`,
  };
}

async function cors(): Promise<Outcome> {
  if (!origin) return { skip: 'set SMOKE_ORIGIN to an origin the tenant allows' };
  const a = await call('/team/lists', {
    method: 'OPTIONS',
    headers: {
      origin,
      'access-control-request-method': 'GET',
      'access-control-request-headers': 'authorization',
    },
  });
  if (a instanceof Error) return { ok: false, detail: a.message };
  const allowed = a.headers.get('access-control-allow-origin');
  const ok = a.status === 204 && allowed === origin;
  return {
    ok,
    detail: ok
      ? `preflight from ${origin}: 204, Access-Control-Allow-Origin ${allowed}`
      : `preflight from ${origin}: want 204 and Access-Control-Allow-Origin ${origin}; got ${describe(a)}, Access-Control-Allow-Origin ${allowed ?? '(none)'}`,
  };
}

const checks: [string, () => Promise<Outcome>][] = [
  ['healthz', healthz],
  ['cached read', cachedRead],
  ['rate limits', rateLimits],
  ['bad input', badInput],
  ['cors', cors],
];

console.log(`Smoke test of ${base}`);
let failed = 0;
for (const [name, check] of checks) {
  const outcome = await check();
  const line =
    'skip' in outcome
      ? `SKIP  ${name}: ${outcome.skip}`
      : `${outcome.ok ? 'PASS' : 'FAIL'}  ${name}: ${outcome.detail}`;
  // The token is never part of a line; scrub anyway, in case an answer echoed it.
  console.log(line.replaceAll(token, '[token]'));
  if ('ok' in outcome && !outcome.ok) failed++;
}
console.log(
  failed === 0 ? 'All checks passed.' : `${failed} check${failed === 1 ? '' : 's'} failed.`,
);
process.exit(failed === 0 ? 0 : 1);
