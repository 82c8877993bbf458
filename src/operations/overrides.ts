/**
 * ROUTE_OVERRIDES lets an operator point any built-in operation at another upstream
 * path or credential header, change its cost, cache or deadline, and amend its
 * query and JSON body schemas (JSON Schema, as in PLATFORM_OPERATIONS) without a
 * code change, e.g.
 * `{"session.create": {"upstream_path": "/v2/session/create", "credential": "authorization",
 * "cost": 20, "timeout_ms": 45000, "body": {"type": "object", "properties": {…}}}}`.
 */
import * as z from 'zod';
import type { ConfiguredOperation, InputSchema, PlatformOperation } from '../types/operations';
import type { OperationOverride, OperationOverrides } from '../types/settings';
import { bodyFromJsonSchema, queryFromJsonSchema, SchemaProblem } from './json-schema';
import { keyedByOperationId, prototypeNameProblem } from './operation-ids';
import { BUILT_IN_OPERATIONS } from './table';

/** A request's units (docs/LIMITS.md, "Policies, quotas and costs"). */
export const costSchema = z.number().int().min(0).max(1000);

export const cachePolicySchema = z.strictObject({
  ttl_s: z.number().int().min(0).max(86_400),
  grace_s: z.number().int().min(0).max(86_400),
  stale_if_error_s: z
    .number()
    .int()
    .min(0)
    .max(7 * 86_400)
    .optional(),
});

/** An operation's deadline; UPSTREAM_TIMEOUT_MS stays the ceiling. */
export const timeoutSchema = z.number().int().min(100).max(300_000);

const override = z.strictObject({
  upstream_path: z
    .string()
    .regex(/^\/[A-Za-z0-9_\-./:]*$/, 'must be an absolute path; `:name` placeholders allowed')
    .optional(),
  credential: z.enum(['authorization', 'x-api-key']).optional(),
  cost: costSchema.optional(),
  cache: cachePolicySchema.optional(),
  timeout_ms: timeoutSchema.optional(),
  query: z.unknown().optional(),
  body: z.unknown().optional(),
});

const byId = new Map(BUILT_IN_OPERATIONS.map((r) => [r.id, r]));

export const operationOverridesSchema = keyedByOperationId.transform((value, ctx) => {
  const out: OperationOverrides = {};
  for (const [id, raw] of Object.entries(value)) {
    const op = byId.get(id);
    if (!op) {
      const message = prototypeNameProblem(id) ?? 'is not a known operation id';
      ctx.addIssue({ code: 'custom', path: [id], message });
      continue;
    }
    const parsed = override.safeParse(raw);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        ctx.addIssue({ code: 'custom', path: [id, ...issue.path], message: issue.message });
      }
      continue;
    }
    const { query, body, ...rest } = parsed.data;
    const entry: OperationOverride = rest;
    try {
      if (query !== undefined) entry.query = amended(op, 'query', query);
      if (body !== undefined) entry.body = amended(op, 'body', body);
    } catch (err) {
      if (!(err instanceof SchemaProblem)) throw err;
      ctx.addIssue({ code: 'custom', path: [id, ...err.path], message: err.message });
    }
    out[id] = entry;
  }
  return out;
}) satisfies z.ZodType<OperationOverrides>;

/** The operator's schema for a built-in operation's query or body, where it has one to amend. */
function amended(op: PlatformOperation, field: 'query' | 'body', json: unknown): InputSchema {
  if (field === 'body' && !op.body) {
    const why = op.upload ? 'its body is a multipart upload' : 'it takes no JSON body';
    throw new SchemaProblem([field], `cannot be amended: ${why}`);
  }
  try {
    return field === 'query' ? queryFromJsonSchema(json) : bodyFromJsonSchema(json);
  } catch (err) {
    if (err instanceof SchemaProblem) throw new SchemaProblem([field, ...err.path], err.message);
    throw err;
  }
}

/** Default cost: reads 1, other writes 2; entries may set their own (docs/LIMITS.md, "Policies, quotas and costs"). */
function defaultCost(op: PlatformOperation): number {
  return op.cost ?? (op.method === 'GET' ? 1 : 2);
}

/** Deadlines by kind: reads are quick or failing; a write may start work upstream. */
export const READ_TIMEOUT_MS = 10_000;
export const WRITE_TIMEOUT_MS = 15_000;

function defaultTimeout(op: PlatformOperation): number {
  return op.timeoutMs ?? (op.method === 'GET' ? READ_TIMEOUT_MS : WRITE_TIMEOUT_MS);
}

/** The operation as configured: the table entry with the operator's override applied. */
export function configureOperation(
  op: PlatformOperation,
  overrides: OperationOverrides,
): ConfiguredOperation {
  const o = overrides[op.id];
  // The platform's own path unless the entry or an operator says otherwise.
  if (!o) {
    return {
      ...op,
      upstreamPath: op.upstreamPath ?? op.path,
      cost: defaultCost(op),
      timeoutMs: defaultTimeout(op),
    };
  }
  return {
    ...op,
    upstreamPath: o.upstream_path ?? op.upstreamPath ?? op.path,
    credential: o.credential ?? op.credential,
    cost: o.cost ?? defaultCost(op),
    timeoutMs: o.timeout_ms ?? defaultTimeout(op),
    // Only operations the table marks cacheable can be cached.
    cache: op.cache && (o.cache ?? op.cache),
    query: o.query ?? op.query,
    body: o.body ?? op.body,
  };
}
