/**
 * The checking floor of `npm run bench` (issue 48): the least a *safe* gateway must do
 * with a platform answer, beside the bare forward that checks nothing. It looks up the
 * platform key for the caller's token in a fixed map, forwards with it, reads the whole
 * answer, learns its envelope code (the answer parsed), runs the gateway's own secret
 * look over it (`mayHoldSecrets`, as src/upstream/redact.ts masks answers), and returns
 * the bytes. No limits, no cache, no log line, no router. Bundled by ./floor.ts.
 */
import { decodeUtf8 } from '../../src/bytes';
import { DEFAULT_PLATFORM_KEY_PATTERN } from '../../src/settings';
import { mayHoldSecrets } from '../../src/upstream/redact';

interface Env {
  UPSTREAM: string;
  /** JSON: token → platform key. */
  KEYS: string;
  KEY_HEADER: string;
}

const envelopeError = (status: number, code: number, msg: string) =>
  new Response(JSON.stringify({ code, msg, data: null }), {
    status,
    headers: { 'content-type': 'application/json' },
  });

/** Built once per isolate, as a gateway keeps its settings. */
let keys: Map<string, string> | undefined;
const pattern = new RegExp(DEFAULT_PLATFORM_KEY_PATTERN, 'g');

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    keys ??= new Map(Object.entries(JSON.parse(env.KEYS) as Record<string, string>));
    const url = new URL(request.url);
    const token = (request.headers.get('authorization') ?? '').replace(/^Bearer\s+/i, '');
    const key = keys.get(token);
    if (key === undefined) return envelopeError(401, 40100, 'Unauthorized');
    const upstream = await fetch(env.UPSTREAM + url.pathname + url.search, {
      headers: { [env.KEY_HEADER]: key },
    });
    const body = new Uint8Array(await upstream.arrayBuffer());
    const text = decodeUtf8(body);
    let code: unknown;
    try {
      code = (JSON.parse(text) as { code?: unknown }).code;
    } catch {
      return envelopeError(502, 50201, 'Bad Gateway');
    }
    if (!Number.isInteger(code)) return envelopeError(502, 50201, 'Bad Gateway');
    if (mayHoldSecrets(text, { pattern, tenantKey: key }))
      return envelopeError(502, 50201, 'Bad Gateway');
    return new Response(body, {
      status: upstream.status,
      headers: { 'content-type': upstream.headers.get('content-type') ?? 'application/json' },
    });
  },
};
