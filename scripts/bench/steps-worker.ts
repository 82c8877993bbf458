/**
 * The probe Worker of `npm run bench:steps` (./steps.ts): runs one of the gateway's own
 * steps `n` times in a row inside workerd, so its CPU per call can be read from /proc
 * without the noise of HTTP round trips. `ANSWER` is the platform's 23 KB team list.
 */
import { cacheKey } from '../../src/cache/key';
import { rateLimitHeaders } from '../../src/limits/headers';
import { log } from '../../src/log';
import type { MeterState } from '../../src/metering/meter-state';
import { readTrace } from '../../src/observability/trace';
import { DEFAULT_PLATFORM_KEY_PATTERN } from '../../src/settings';
import { hasSecretFieldInText, mayHoldSecrets } from '../../src/upstream/redact';

interface Env {
  ANSWER: string;
  TENANT_KEY: string;
}

const LOG_LINE = {
  request_id: '0b0e8d1c-1111-4222-8333-444455556666',
  trace_id: '5e23565d8cf4875428d0f9ee64869613',
  tenant_id: 'ten_jWriasRvYhAk1f0h',
  token_id: 'tok_dcKnlvr24xbeaWxt',
  route: 'team.list',
  method: 'GET',
  status: 200,
  code: 0,
  cache: 'L1',
  limiter: 'admitted',
  cost: 1,
  duration_ms: 0,
};
/** Answers full of escapes: a chat transcript (a line break every 50 characters), and text written as \\u escapes. */
const CHAT = JSON.stringify({
  code: 0,
  msg: 'Success',
  data: { content: `${'x'.repeat(49)}\n`.repeat(4000) },
});
const ESCAPED_TEXT = `{"code":0,"msg":"Success","data":{"content":"${'\\u4e2d'.repeat(33_000)}"}}`;
const METERS: MeterState[] = [
  { kind: 'rate', name: 'burst', limit: 20, window_s: 10, used: 1, remaining: 19, reset_s: 10 },
  {
    kind: 'quota',
    name: 'daily',
    limit: 10000,
    window_s: 86400,
    used: 1,
    remaining: 9999,
    reset_s: 3600,
  },
];

/** Each step, once; what it returns only keeps the work from being optimised away. */
function steps(env: Env): Record<string, () => unknown> {
  const bytes = new TextEncoder().encode(env.ANSWER);
  const shapes = {
    pattern: new RegExp(DEFAULT_PLATFORM_KEY_PATTERN, 'g'),
    tenantKey: env.TENANT_KEY,
  };
  return {
    nothing: () => 0,
    'decode 23 KB': () => new TextDecoder().decode(bytes).length,
    'JSON.parse 23 KB': () => JSON.parse(env.ANSWER),
    'secret look (all)': () => mayHoldSecrets(env.ANSWER, shapes),
    'secret look: field names': () => hasSecretFieldInText(env.ANSWER),
    'secret look, 200 KB of chat': () => mayHoldSecrets(CHAT, shapes),
    'secret look, 200 KB \\u-escaped': () => mayHoldSecrets(ESCAPED_TEXT, shapes),
    'secret look: key pattern': () => {
      shapes.pattern.lastIndex = 0;
      return shapes.pattern.test(env.ANSWER);
    },
    'cache key': () =>
      cacheKey({
        keyFingerprint: 'f1e2d3c4b5a69788',
        version: '3',
        upstreamBase: 'http://127.0.0.1:8799',
        operationId: 'team.list',
        upstreamPath: '/team/lists',
        credential: 'authorization',
        params: {},
        query: { page_num: 1, page_size: 10 },
      }),
    'RateLimit fields': () => rateLimitHeaders(METERS),
    'trace context': () => readTrace(undefined, undefined),
    'request log line': () => log.info('request', LOG_LINE),
  };
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    const all = steps(env);
    if (url.pathname === '/') return Response.json(Object.keys(all));
    const step = all[decodeURIComponent(url.pathname.slice(1))];
    if (!step) return new Response('no such step', { status: 404 });
    const n = Number(url.searchParams.get('n') ?? 1000);
    let kept: unknown;
    for (let i = 0; i < n; i++) kept = step();
    return new Response(typeof kept);
  },
};
