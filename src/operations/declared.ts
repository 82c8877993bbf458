/**
 * PLATFORM_OPERATIONS: platform operations an operator declares in settings,
 * without a release (docs/CONFIGURATION.md, "Declaring operations"). A JSON
 * object keyed by operation id, e.g.
 * `{"product.search": {"method": "GET", "path": "/dashboard/product/search",
 * "credential": "x-api-key", "group": "products", "query": {"type": "object",
 * "properties": {"q": {"type": "string", "maxLength": 200}}, "required": ["q"]}}}`.
 * Each entry becomes an operation like a built-in one; its schemas become zod
 * schemas here (operations/json-schema.ts). An id or path that a built-in operation
 * or the gateway itself already answers is refused, naming both.
 */
import * as z from 'zod';
import type { HttpMethod, InputSchema, PlatformOperation } from '../types/operations';
import {
  bodyFromJsonSchema,
  paramsFromJsonSchema,
  queryFromJsonSchema,
  SchemaProblem,
} from './json-schema';
import { keyedByOperationId, prototypeNameProblem } from './operation-ids';
import { cachePolicySchema, costSchema, timeoutSchema } from './overrides';
import { BUILT_IN_OPERATIONS } from './table';

/** What the gateway answers itself: no declared path may reach under these. */
const GATEWAY_PATHS = [
  '/healthz',
  '/openapi.json',
  '/docs/*',
  '/admin/*',
  '/auth/*',
  '/token/*',
  '/usage/*',
  '/session/ws/*',
  '/console/*',
  '/portal/*',
  '/mcp',
] as const;

/**
 * Names the gateway's own routes go by: in logs and usage history (operationId()), and as
 * operationIds of the OpenAPI document (`usage.own` is GET /usage's there), where a
 * declared operation's id must not repeat one.
 */
const GATEWAY_OPERATION_IDS = [
  'admin',
  'auth.browser_token',
  'docs',
  'healthz',
  'home',
  'mcp',
  'openapi',
  'session.events',
  'token.own',
  'token.rotate',
  // A request under a valid token that matched no route, in the usage history.
  'unmatched',
  'usage',
  'usage.own',
  'usage.requests',
];

/** Group names that are scopes of the gateway's own (usage:read, token:rotate) or its limits'. */
const RESERVED_GROUPS = ['usage', 'token', 'auth', 'self'];

const operationId = z
  .string()
  .regex(
    /^[a-z][a-z0-9_-]{0,31}(\.[a-z][a-z0-9_-]{0,31}){0,3}$/,
    'must be lower-case words of letters, digits, _ or -, joined by dots (e.g. product.search)',
  );

const entrySchema = z.strictObject({
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE'], {
    error: 'must be GET, POST, PUT, PATCH or DELETE',
  }),
  path: z
    .string({ error: 'is required: the platform path, e.g. /dashboard/product/{product_id}' })
    .max(512, 'must be at most 512 characters')
    .regex(
      /^(\/([A-Za-z0-9_.~-]+|\{[A-Za-z_][A-Za-z0-9_]{0,63}\}|:[A-Za-z_][A-Za-z0-9_]{0,63}))+$/,
      'must be an absolute path of letters, digits, _ . ~ - and {name} placeholders',
    )
    .refine((p) => !/\/\.{1,2}(\/|$)/.test(p), 'must not have a . or .. segment'),
  credential: z.enum(['authorization', 'x-api-key'], {
    error: 'must be authorization or x-api-key',
  }),
  group: z
    .string({ error: 'is required: the resource group whose scopes it needs' })
    .regex(/^[a-z][a-z0-9_]{0,31}$/, 'must be 1 to 32 lower-case letters, digits or _')
    .refine((g) => !RESERVED_GROUPS.includes(g), `must not be ${RESERVED_GROUPS.join(', ')}`),
  cost: costSchema.optional(),
  cache: cachePolicySchema.optional(),
  timeout_ms: timeoutSchema.optional(),
  secrets: z.boolean({ error: 'must be true or false' }).optional(),
  // What an agent reads to choose the operation as an MCP tool (docs/MCP.md).
  title: z
    .string({ error: 'must be a string' })
    .min(1, 'must not be empty')
    .max(100, 'must be at most 100 characters')
    .optional(),
  description: z
    .string({ error: 'must be a string' })
    .min(1, 'must not be empty')
    .max(2000, 'must be at most 2000 characters')
    .optional(),
  query: z.unknown().optional(),
  params: z.unknown().optional(),
  body: z.unknown().optional(),
});

type Entry = z.output<typeof entrySchema>;

export const platformOperationsSchema = keyedByOperationId.transform((value, ctx) => {
  const operations: PlatformOperation[] = [];
  for (const [id, raw] of Object.entries(value)) {
    const { problems, op } = declare(id, raw, operations);
    for (const { path, message } of problems)
      ctx.addIssue({ code: 'custom', path: [id, ...path], message });
    if (op) operations.push(op);
  }
  return operations;
});

interface Problem {
  path: PropertyKey[];
  message: string;
}

type Declared = { problems: Problem[]; op: PlatformOperation | null };
const refused = (problems: Problem[]): Declared => ({ problems, op: null });

/**
 * One entry as an operation, its schemas converted once; or what is wrong with it, each
 * problem with the field it is in.
 */
function declare(id: string, raw: unknown, earlier: PlatformOperation[]): Declared {
  const inherited = prototypeNameProblem(id);
  if (inherited) return refused([{ path: [], message: inherited }]);
  const idOk = operationId.safeParse(id);
  if (!idOk.success)
    return refused([{ path: [], message: `operation id ${idOk.error.issues[0]?.message}` }]);
  if (BUILT_IN_OPERATIONS.some((s) => s.id === id)) {
    return refused([
      { path: [], message: 'is the id of a built-in operation: amend it with ROUTE_OVERRIDES' },
    ]);
  }
  if (GATEWAY_OPERATION_IDS.includes(id)) {
    return refused([{ path: [], message: "is the name of one of the gateway's own routes" }]);
  }
  const parsed = entrySchema.safeParse(raw);
  if (!parsed.success) {
    return refused(
      parsed.error.issues.map((i) => ({
        path: i.path,
        message: i.code === 'unrecognized_keys' ? `unknown field ${i.keys.join(', ')}` : i.message,
      })),
    );
  }
  const entry = parsed.data;
  const problems: Problem[] = [];
  const path = honoPath(entry.path);
  if (entry.cache && entry.method !== 'GET') {
    problems.push({ path: ['cache'], message: 'only a GET operation is cached' });
  }
  if (entry.body !== undefined && (entry.method === 'GET' || entry.method === 'DELETE')) {
    problems.push({ path: ['body'], message: `a ${entry.method} operation takes no body` });
  }
  const clash = collision(entry.method, path, earlier);
  if (clash) problems.push({ path: ['path'], message: clash });
  const schemas: Partial<Record<'query' | 'params' | 'body', InputSchema>> = {};
  for (const field of ['query', 'params', 'body'] as const) {
    try {
      const schema = schemaOf(field, entry, path);
      if (schema) schemas[field] = schema;
    } catch (err) {
      if (!(err instanceof SchemaProblem)) throw err;
      problems.push({ path: [field, ...err.path], message: err.message });
    }
  }
  return problems.length > 0
    ? refused(problems)
    : { problems, op: toOperation(id, entry, schemas) };
}

/** `{name}` placeholders in Hono's `:name` form, the operation table's. */
const honoPath = (path: string) => path.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, ':$1');

const placeholders = (path: string) =>
  [...path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1] ?? '');

function schemaOf(
  field: 'query' | 'params' | 'body',
  entry: Entry,
  path: string,
): InputSchema | undefined {
  const json = entry[field];
  if (field === 'params') return paramsFromJsonSchema(json, placeholders(path));
  if (json === undefined) return undefined;
  return field === 'query' ? queryFromJsonSchema(json) : bodyFromJsonSchema(json);
}

function toOperation(
  id: string,
  entry: Entry,
  schemas: Partial<Record<'query' | 'params' | 'body', InputSchema>>,
): PlatformOperation {
  return {
    id,
    method: entry.method satisfies HttpMethod,
    path: honoPath(entry.path),
    credential: entry.credential,
    group: entry.group,
    declared: true,
    ...(entry.cost !== undefined ? { cost: entry.cost } : {}),
    ...(entry.cache ? { cache: entry.cache } : {}),
    ...(entry.timeout_ms !== undefined ? { timeoutMs: entry.timeout_ms } : {}),
    ...(entry.secrets ? { secrets: true } : {}),
    ...(entry.title !== undefined ? { title: entry.title } : {}),
    ...(entry.description !== undefined ? { description: entry.description } : {}),
    params: schemas.params,
    query: schemas.query,
    body: schemas.body,
  };
}

/** Why this method and path cannot be declared: a route already answers them. */
function collision(method: string, path: string, declared: PlatformOperation[]): string | null {
  const own = GATEWAY_PATHS.find((p) => overlaps(path, p));
  if (own) return `overlaps the gateway's own ${own}`;
  const builtIn = BUILT_IN_OPERATIONS.find((s) => overlaps(path, s.path));
  if (builtIn) {
    return `overlaps the built-in operation ${builtIn.id} (${builtIn.method} ${builtIn.path}): amend it with ROUTE_OVERRIDES`;
  }
  const twin = declared.find((s) => s.method === method && overlaps(path, s.path));
  return twin ? `overlaps ${twin.id} (${twin.method} ${twin.path})` : null;
}

/**
 * Whether some request path matches both patterns: segment by segment, a placeholder matches
 * any segment, and a trailing `*` any rest (none included).
 */
export function overlaps(a: string, b: string): boolean {
  const x = a.split('/').slice(1);
  const y = b.split('/').slice(1);
  for (let i = 0; ; i++) {
    const s = x[i];
    const t = y[i];
    if (s === '*' || t === '*') return true;
    if (s === undefined || t === undefined) return s === t;
    if (!(s.startsWith(':') || t.startsWith(':') || s === t)) return false;
  }
}
