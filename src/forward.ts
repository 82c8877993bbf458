/**
 * forward(): one platform call for a validated request, with the tenant's
 * platform key in the operation's header; cacheable reads go through the read
 * cache. The only caller of the upstream client. It never throws: what it did,
 * answer or failure, is its outcome, which the handler answers from and the
 * steps around it read (whether the platform acted, attempts, cache state).
 * The one place platform secrets are masked: an answer is what its caller may
 * see, and what may be kept of it is masked for everyone.
 */
import type { Context } from 'hono';
import { decodeUtf8 } from './bytes';
import { cacheKey } from './cache/key';
import { type CacheOutcome, readThrough } from './cache/read-through';
import { type ErrorKind, GatewayError } from './errors';
import { oncePer } from './once-per';
import { hasScope } from './tenants/scopes';
import type { HonoEnv, ValidatedInput } from './types/context';
import type { ConfiguredOperation } from './types/operations';
import type { CacheStatus, CacheTier, ForwardOutcome, KeptAnswer } from './types/outcomes';
import type { Settings } from './types/settings';
import { rejectedKeyStatus, type UpstreamResult } from './upstream/normalize';
import { maskSecrets, type SecretShapes } from './upstream/redact';
import { buildUpstreamRequest } from './upstream/request';
import { callResilient, platformFailed, type ResilienceOptions } from './upstream/resilient';

/** The window the retry budget counts calls over (docs/RESILIENCE.md). */
const RETRY_WINDOW_MS = 10_000;

/**
 * Why a failed read may be answered from the cache past its grace (stale-if-error), or null when
 * it may not: the platform failed or asked for a pause, not that it refused this tenant's key.
 */
function staleReason(err: unknown): string | null {
  if (!(err instanceof GatewayError)) return null;
  switch (err.kind) {
    case 'UPSTREAM_UNAVAILABLE':
      return 'breaker_open';
    case 'UPSTREAM_BACKING_OFF':
    case 'UPSTREAM_RATE_LIMITED':
      return 'platform_pause';
    case 'UPSTREAM_TIMEOUT':
      return 'timeout';
    case 'UPSTREAM_UNREACHABLE':
      return 'unreachable';
    case 'UPSTREAM_HTTP_ERROR':
      return platformFailed(err) ? 'platform_error' : null;
    default:
      return null;
  }
}

export interface ForwardOptions {
  /**
   * Whether the caller's `Cache-Control` (no-cache, no-store) applies. An operation
   * check's own read goes through the cache whatever the caller asked, so one
   * counted request never makes two upstream calls.
   */
  callerCacheControl: boolean;
}

const AS_THE_CALLER_ASKS: ForwardOptions = { callerCacheControl: true };

/** Failures that mean the platform surely did not act: it asked for a pause. */
const NOT_ACTED = new Set<ErrorKind>(['UPSTREAM_RATE_LIMITED', 'UPSTREAM_BACKING_OFF']);

/** One forward's outcome, filled in as the call goes (one object a call, a fixed shape). */
class Forwarded implements ForwardOutcome {
  answer: UpstreamResult | null = null;
  error: unknown = undefined;
  acted = false;
  attempts = 0;
  upstreamStatus: number | undefined = undefined;
  upstreamMs: number | undefined = undefined;
  cache: CacheStatus | undefined = undefined;
  tier: CacheTier | undefined = undefined;
  age = 0;
  staleReason: string | undefined = undefined;
  keyRejected: number | undefined = undefined;
  /** Set when the answer holds secrets shown whole to a caller who may see them. */
  private shownWhole: SecretShapes | null = null;

  answered(got: CacheOutcome): void {
    this.answer = got.result;
    this.cache = got.status;
    this.tier = got.tier;
    this.age = got.age;
    this.staleReason = got.staleReason;
  }

  /** A secret operation's answer (apikey.list's keys): masked unless this caller may see them. */
  showSecretsTo(c: Context<HonoEnv>): void {
    if (!this.answer) return;
    const shapes = secretShapes(c);
    if (seesSecrets(c)) this.shownWhole = shapes;
    else this.answer = masked(this.answer, shapes);
  }

  failed(err: unknown): void {
    this.error = err;
    this.keyRejected = rejectedKeyStatus(err);
  }

  keptAnswer(): KeptAnswer | null {
    if (!this.answer) return null;
    // Masked only when asked (a write with an Idempotency-Key), not for every caller shown it whole.
    const answer = this.shownWhole ? masked(this.answer, this.shownWhole) : this.answer;
    return {
      status: answer.status,
      body: answer.text ?? decodeUtf8(answer.body),
      // Only successes are cached, without their envelope.
      code: answer.envelope?.code ?? 0,
    };
  }
}

/** What a platform secret looks like for this request's tenant. */
function secretShapes(c: Context<HonoEnv>): SecretShapes {
  return {
    pattern: c.get('settings').PLATFORM_KEY_PATTERN,
    tenantKey: c.get('tenant').platform_key,
  };
}

/** A secret operation's secrets are shown whole only with apikeys:admin, never to a browser token. */
function seesSecrets(c: Context<HonoEnv>): boolean {
  return hasScope(c.get('token').scopes, 'apikeys:admin') && !c.get('partition');
}

/** The answer with every platform secret masked: the same object when it holds none. */
function masked(result: UpstreamResult, shapes: SecretShapes): UpstreamResult {
  const body = maskSecrets(result.body, shapes, result.text);
  // A masked body's text is no longer the decoded original: drop it.
  return body === result.body ? result : { status: result.status, envelope: result.envelope, body };
}

/** The operation's deadline: its own, never past the UPSTREAM_TIMEOUT_MS ceiling. */
export function deadlineOf(operation: ConfiguredOperation, settings: Settings): number {
  return Math.min(operation.timeoutMs, settings.UPSTREAM_TIMEOUT_MS);
}

/** The breakers', the retry budgets' and the pauses' settings, made once per settings object. */
const resilienceOptions = oncePer((settings: Settings): ResilienceOptions => {
  return {
    breaker: {
      consecutiveFailures: settings.CIRCUIT_FAILURES,
      failureRatio: settings.CIRCUIT_FAILURE_RATIO,
      windowMs: settings.CIRCUIT_WINDOW_S * 1000,
      minCalls: settings.CIRCUIT_MIN_CALLS,
      cooldownMs: settings.CIRCUIT_COOLDOWN_S * 1000,
      probeTimeoutMs: settings.UPSTREAM_TIMEOUT_MS,
    },
    retry: {
      ratio: settings.RETRY_BUDGET_RATIO,
      minPerSecond: settings.RETRY_BUDGET_MIN_PER_S,
      windowMs: RETRY_WINDOW_MS,
    },
    maxPauseMs: settings.MAX_PLATFORM_PAUSE_S * 1000,
  };
});

export async function forward(
  c: Context<HonoEnv>,
  operation: ConfiguredOperation,
  input: ValidatedInput,
  options: ForwardOptions = AS_THE_CALLER_ASKS,
): Promise<Forwarded> {
  const outcome = new Forwarded();
  try {
    outcome.answered(await lookOrCall(c, operation, input, options, outcome));
    if (operation.secrets) outcome.showSecretsTo(c);
  } catch (err) {
    outcome.failed(err);
  }
  // A read changes nothing; a write the platform refused with a pause was not done.
  outcome.acted =
    operation.method !== 'GET' &&
    outcome.attempts > 0 &&
    !(outcome.error instanceof GatewayError && NOT_ACTED.has(outcome.error.kind));
  return outcome;
}

/** The answer from the read cache or the platform; the call's figures go into `outcome`. */
async function lookOrCall(
  c: Context<HonoEnv>,
  operation: ConfiguredOperation,
  input: ValidatedInput,
  options: ForwardOptions,
  outcome: Forwarded,
): Promise<CacheOutcome> {
  const settings = c.get('settings');
  const deadlineMs = deadlineOf(operation, settings);
  const fetchFresh = async () => {
    const started = Date.now();
    const result = await callResilient({
      upstream: settings.PLATFORM_BASE_URL,
      keyId: c.get('tenant').key_fingerprint,
      request: buildUpstreamRequest(settings, {
        operation,
        ...input,
        platformKey: c.get('tenant').platform_key,
        requestId: c.get('requestId'),
        callerHeaders: c.req.raw.headers,
        trace: c.get('trace'),
      }),
      idempotent: operation.method === 'GET',
      deadlineMs,
      options: resilienceOptions(settings),
      // A stale answer's refresh counts too: it runs on after the answer (read-through.ts).
      onAttempt: (attempt) => {
        outcome.attempts = attempt;
      },
    }).finally(() => {
      outcome.upstreamMs = Date.now() - started;
    });
    outcome.upstreamStatus = result.status;
    // An answer that holds something like a key is masked for everyone, before the cache;
    // a secret operation's is cached whole and masked per caller (showSecretsTo).
    return operation.secrets ? result : masked(result, secretShapes(c));
  };
  if (!operation.cache) return { result: await fetchFresh(), status: 'BYPASS', age: 0 };
  const cacheControl = options.callerCacheControl ? (c.req.header('cache-control') ?? '') : '';
  // Without the TenantGuard's cache version a purge could not reach us: bypass.
  const version = c.get('cacheVersion');
  const key =
    version === undefined || /\bno-store\b/i.test(cacheControl)
      ? null
      : cacheKey({
          keyFingerprint: c.get('tenant').key_fingerprint,
          version,
          upstreamBase: settings.PLATFORM_BASE_URL,
          operationId: operation.id,
          upstreamPath: operation.upstreamPath,
          credential: operation.credential,
          params: input.params,
          query: input.query,
        });
  return readThrough({
    key,
    owner: c.get('tenant').key_fingerprint,
    policy: operation.cache,
    revalidate: /\bno-cache\b/i.test(cacheControl),
    fetchFresh,
    waitUntil: (p) => c.executionCtx.waitUntil(p),
    l1Bytes: settings.L1_CACHE_BYTES,
    // A read another request started gets its whole deadline, and a little more, before this one
    // reads itself.
    followerTimeoutMs: deadlineMs + 1000,
    staleReason,
  });
}
