/**
 * The shape of a platform operation (src/operations/ builds the table on it).
 * Declared here, below settings, because an operator declares operations in a
 * setting (PLATFORM_OPERATIONS, docs/CONFIGURATION.md) and amends built-in
 * ones in another (ROUTE_OVERRIDES): types/settings.ts carries both.
 */
import type { z } from 'zod';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Which request header carries the platform key upstream. */
export type CredentialHeader = 'authorization' | 'x-api-key';

/** A cacheable read: fresh for `ttl_s`, then served stale for `grace_s` while it refreshes. */
export interface CachePolicy {
  ttl_s: number;
  grace_s: number;
  /** Past its grace, how long an entry may still answer when the platform fails (default 24 h). */
  stale_if_error_s?: number;
}

/** Path, query or JSON body fields: a strict object schema whose output goes upstream. */
export type InputSchema = z.ZodType<Record<string, unknown>>;

/**
 * A `multipart/form-data` body, streamed to the platform as it arrives (never
 * buffered whole) and checked on the way (middleware/upload.ts).
 */
export interface UploadSpec {
  /** The part name that carries files (`files`); each such part must name a file. */
  fileField: string;
  /** Text parts besides the files, each a short value (session_id). */
  fields: InputSchema;
  /** Most file parts in one body. */
  maxFiles: number;
}

/** An upload body on its way: what the platform gets, and why it was cut off, if it was. */
export interface UploadBody {
  stream: ReadableStream<Uint8Array>;
  /** The caller's `multipart/form-data; boundary=…`, passed on as it is. */
  contentType: string;
  /** The caller's Content-Length, kept upstream; null when it streamed without one. */
  length: number | null;
  /** The refusal that cut the stream (too large, a bad part), once there is one. */
  failure(): Error | null;
  /** Whether the gateway is waiting for the caller's next bytes (a deadline then is the caller's). */
  awaitingCaller(): boolean;
  /** Aborted with the refusal: the platform call ends there, its request never completed. */
  signal: AbortSignal;
  /** The request is over: stop watching the caller's credentials. */
  end(): void;
}

/** A request's validated path, query and body (defaults applied, unknown fields refused). */
export interface ValidatedInput {
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  /** Absent for operations without a JSON body. */
  body?: Record<string, unknown>;
  /** Upload operations only: the body as a checked stream. */
  upload?: UploadBody;
}

/** Lets a check read another operation's data, through the cache where it has one. */
export interface PlatformReader {
  data(operationId: string): Promise<unknown>;
}

/**
 * One platform operation, built in (src/operations/) or declared (PLATFORM_OPERATIONS).
 * Everything the gateway does for it is driven by this entry: matching, validation,
 * forwarding, credential injection.
 */
export interface PlatformOperation {
  /** Stable operation id: used in ROUTE_OVERRIDES, logs and docs. */
  id: string;
  method: HttpMethod;
  /** Gateway path in Hono syntax; the same path as the platform's. */
  path: string;
  /** Upstream path template (`:name` placeholders) when it differs from `path`; overridable. */
  upstreamPath?: string;
  credential: CredentialHeader;
  /** Resource group: scopes `<group>:read` and `<group>:write`, group quotas, OpenAPI tags. */
  group: string;
  /** Units this request counts against rate policies and quotas; operations/overrides.ts sets the default. */
  cost?: number;
  /** Responses carry platform secrets (`api_key`): masked without apikeys:admin. */
  secrets?: boolean;
  /** Cacheable reads only: freshness, grace and stale-if-error periods; overridable. */
  cache?: CachePolicy;
  /**
   * The operation's deadline in ms when it differs from its kind's (reads 10 s, writes 15 s);
   * overridable; UPSTREAM_TIMEOUT_MS is the ceiling (docs/RESILIENCE.md, "Per-operation deadlines").
   */
  timeoutMs?: number;
  /** Checks that need platform data, run after validation (calls.list's status). */
  check?: (input: ValidatedInput, platform: PlatformReader) => Promise<void>;
  params?: InputSchema;
  /**
   * Strict object schema; its output (defaults applied) is what goes upstream. Absent: no query
   * parameters.
   */
  query?: InputSchema;
  body?: InputSchema;
  /** A streamed multipart body instead of a JSON one (session.upload). */
  upload?: UploadSpec;
  /** Declared by the operator in PLATFORM_OPERATIONS, not built in. */
  declared?: boolean;
  /** A short name people and agents read: the MCP tool's title (docs/MCP.md). */
  title?: string;
  /**
   * What it does, what it answers and when to use it: what an agent reads to choose the
   * tool (docs/MCP.md, "Tools").
   */
  description?: string;
  /**
   * Its effect where its method does not say it, for MCP tool annotations: a POST that
   * changes what exists (`destructive`), or one that starts agents acting on the open web
   * (`openWorld`).
   */
  effect?: { destructive?: boolean; openWorld?: boolean };
}

/** An operation as configured: overrides applied, upstream path, cost and deadline settled. */
export type ConfiguredOperation = PlatformOperation & {
  upstreamPath: string;
  cost: number;
  timeoutMs: number;
};
