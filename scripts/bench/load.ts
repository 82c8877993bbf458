/**
 * A small closed-loop load generator: `concurrency` workers each send one
 * request, wait for the answer, and send the next, until `requests` have
 * been sent or the round's time cap is hit. Latency is measured here, in
 * the client, from just before the request is written until the last byte
 * of the response has arrived.
 */
import http from 'node:http';

export interface Target {
  url: URL;
  headers: Record<string, string>;
  /** A POST with this body (an MCP call); default a GET. */
  body?: string;
  /** Keep-alive connections, reused across rounds so only the warm-up pays for connecting. */
  agent: http.Agent;
  /**
   * A request succeeds on this HTTP status with this envelope code, or, for answers that are
   * not envelopes (MCP's JSON-RPC), a body whose start matches `head` (a RegExp source).
   */
  expect: { status: number; code: number; head?: string };
  /** A refusal this scenario expects too (a flood): counted apart, with its own latencies. */
  refused?: { status: number; code: number };
  /** Requests started at this rate a second (an open loop), instead of as fast as answered. */
  perSecond?: number;
}

export interface RoundResult {
  sent: number;
  ok: number;
  errors: number;
  /** First few distinct error descriptions, for the report. */
  errorSamples: string[];
  wallMs: number;
  /** Latencies of the successful requests, in ms, sorted ascending. */
  latenciesMs: number[];
  /** Requests answered with the target's expected refusal, and their latencies (sorted). */
  refused: number;
  refusedLatenciesMs: number[];
}

export interface RoundOptions {
  requests: number;
  concurrency: number;
  capMs: number;
  requestTimeoutMs: number;
}

export function keepAliveAgent(concurrency: number): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency });
}

// Both the emulator and the gateway answer with the platform envelope, code first.
// A prefix test avoids parsing every body in a client that shares 2 cores with the servers.
const envelopeWithCode = (code: number) => new RegExp(`^\\{"code":${code}[,}]`);

export async function runRound(target: Target, opts: RoundOptions): Promise<RoundResult> {
  const latencies: number[] = [];
  const refusedLatencies: number[] = [];
  const samples = new Set<string>();
  let sent = 0;
  let errors = 0;
  const deadline = performance.now() + opts.capMs;
  const success = {
    ...target.expect,
    head: target.expect.head
      ? new RegExp(target.expect.head)
      : envelopeWithCode(target.expect.code),
  };
  const refusal = target.refused && {
    ...target.refused,
    head: envelopeWithCode(target.refused.code),
  };

  const begin = performance.now();
  const worker = async () => {
    while (sent < opts.requests && performance.now() < deadline) {
      const i = sent++;
      if (target.perSecond) {
        const wait = begin + (i * 1000) / target.perSecond - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
      const t0 = performance.now();
      const failure = await sendOnce(target, success, refusal, opts.requestTimeoutMs);
      if (failure === null) latencies.push(performance.now() - t0);
      else if (failure === REFUSED) refusedLatencies.push(performance.now() - t0);
      else {
        errors++;
        if (samples.size < 5) samples.add(failure);
      }
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: opts.concurrency }, worker));
  const wallMs = performance.now() - start;

  // Requests never sent because of the time cap count as errors: the round did not finish.
  const unsent = opts.requests - sent;
  if (unsent > 0) samples.add(`${unsent} not sent within the ${opts.capMs} ms cap`);
  latencies.sort((a, b) => a - b);
  refusedLatencies.sort((a, b) => a - b);
  return {
    sent,
    ok: latencies.length,
    errors: errors + unsent,
    errorSamples: [...samples],
    wallMs,
    latenciesMs: latencies,
    refused: refusedLatencies.length,
    refusedLatenciesMs: refusedLatencies,
  };
}

const HEAD_BYTES = 120;

/** What sendOnce resolves to on the target's expected refusal. */
const REFUSED = 'refused';

type Outcome = { status: number; code: number; head: RegExp };

/**
 * Resolves to null on the expected status and envelope code, REFUSED on the expected
 * refusal, else to a short description of what went wrong.
 */
function sendOnce(
  target: Target,
  success: Outcome,
  refusal: Outcome | undefined,
  timeoutMs: number,
): Promise<string | null> {
  return new Promise((resolve) => {
    const method = target.body === undefined ? 'GET' : 'POST';
    const req = http.request(
      target.url,
      { method, agent: target.agent, headers: target.headers },
      (res) => {
        // Only the start of the body is checked (and shown on errors): keep 120 bytes, drop the rest.
        let head = Buffer.alloc(0);
        res.on('data', (c: Buffer) => {
          if (head.length < HEAD_BYTES) head = Buffer.concat([head, c]).subarray(0, HEAD_BYTES);
        });
        res.on('error', (e) => resolve(`response error: ${e.message}`));
        res.on('end', () => {
          const body = head.toString('utf8');
          if (refusal && res.statusCode === refusal.status && refusal.head.test(body))
            resolve(REFUSED);
          else if (res.statusCode !== success.status)
            resolve(`HTTP ${res.statusCode}: ${body.slice(0, 120)}`);
          else if (!success.head.test(body))
            resolve(`HTTP ${res.statusCode} but not ${success.head.source}: ${body.slice(0, 120)}`);
          else resolve(null);
        });
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (e) => resolve(`request error: ${e.message}`));
    req.end(target.body);
  });
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}
