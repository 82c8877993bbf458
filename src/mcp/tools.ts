/**
 * The operations one set of settings serves, as MCP tools (docs/MCP.md, "Tools"): one
 * per operation of the catalog (the built-in table and PLATFORM_OPERATIONS), named by its
 * id. `inputSchema` merges the operation's path, query and body schemas into one object,
 * made from the same zod schemas (or the operator's JSON Schema) that validate its HTTP
 * calls, as the OpenAPI document is; `outputSchema` is the platform's model of the answer
 * where the catalog knows it. Built once per catalog, then listed per token: only the
 * tools its scopes allow, in name order, a page at a time.
 */
import { utf8 } from '../bytes';
import { oncePer } from '../once-per';
import { MODELS, SUCCESS_DATA } from '../openapi/models';
import { fieldsOf, inputSchema, type JsonSchema } from '../openapi/schema';
import type { Catalog } from '../operations/catalog';
import { takesIdempotencyKey } from '../operations/table';
import { hasScope, requiredScope } from '../tenants/scopes';
import type { ConfiguredOperation } from '../types/operations';
import { base64Text, isObject } from './protocol';

/** Tools in one `tools/list` answer (docs/MCP.md, "Limits"). */
export const TOOLS_PAGE_SIZE = 20;

/** The argument that carries a write's idempotency key, unless the operation has a field so named. */
export const IDEMPOTENCY_ARGUMENT = 'idempotency_key';

export interface Tool {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations: {
    readOnlyHint: boolean;
    destructiveHint: boolean;
    idempotentHint: boolean;
    openWorldHint: boolean;
  };
}

/** Where each argument of a tool goes in the operation's HTTP request. */
export interface ArgumentPlan {
  /** The path's placeholders, in order. */
  path: readonly string[];
  query: ReadonlySet<string>;
  /** Arguments named by neither go to the body when there is one, else to the query (refused there). */
  hasBody: boolean;
  /** Whether `idempotency_key` is the write's key rather than a field of its own. */
  keyArgument: boolean;
}

export interface ToolEntry {
  operation: ConfiguredOperation;
  scope: string;
  plan: ArgumentPlan;
  /** 2026-07-28: any output schema. */
  modern: Tool;
  /** 2025-era: an output schema only when its answer is an object. */
  legacy: Tool;
}

export interface Toolbox {
  /** In name order. */
  entries: readonly ToolEntry[];
  byName: ReadonlyMap<string, ToolEntry>;
}

/** The catalog's tools, made once per catalog. */
export const toolboxOf = oncePer((catalog: Catalog): Toolbox => {
  const entries = catalog.operations
    .flatMap((operation) => {
      const entry = toolOf(operation);
      return entry ? [entry] : [];
    })
    .sort((a, b) => (a.modern.name < b.modern.name ? -1 : 1));
  return { entries, byName: new Map(entries.map((e) => [e.modern.name, e])) };
});

/** The tools a token's scopes allow, one page from `after` (a name; '' from the start). */
export function toolPage(
  box: Toolbox,
  scopes: readonly string[],
  after: string,
  modern: boolean,
): { tools: Tool[]; last: string | null } {
  const visible = box.entries.filter((e) => e.modern.name > after && hasScope(scopes, e.scope));
  const page = visible.slice(0, TOOLS_PAGE_SIZE);
  const last = visible.length > TOOLS_PAGE_SIZE ? (page.at(-1)?.modern.name ?? null) : null;
  return { tools: page.map((e) => (modern ? e.modern : e.legacy)), last };
}

/** A cursor is the last name of the page before, as base64url: opaque, and stable across changes. */
export function cursorOf(name: string): string {
  let bin = '';
  for (const byte of utf8(name)) bin += String.fromCharCode(byte);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function nameOfCursor(cursor: unknown): string | null {
  if (typeof cursor !== 'string' || !/^[A-Za-z0-9_-]{1,400}$/.test(cursor)) return null;
  return base64Text(cursor.replace(/-/g, '+').replace(/_/g, '/'));
}

/**
 * The operation as a tool, or null for what is not one: an upload (a streamed multipart
 * body), and an operation whose query and body name the same field (an argument could not
 * say which it is).
 */
function toolOf(operation: ConfiguredOperation): ToolEntry | null {
  if (operation.upload) return null;
  const path = [...operation.path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1] ?? '');
  const params = operation.params ? fieldsOf(operation.params) : { properties: {}, required: [] };
  const query = operation.query ? fieldsOf(operation.query) : { properties: {}, required: [] };
  // The body's JSON Schema as OpenAPI shows it (from its zod schema or the operator's).
  const body = operation.body ? inputSchema(operation.body) : null;
  const bodyProperties = isSchemaMap(body?.properties) ? body.properties : {};
  const inQuery = Object.keys(query.properties);
  if (inQuery.some((name) => name in bodyProperties && !path.includes(name))) return null;

  const properties: Record<string, JsonSchema> = {};
  // A body field that repeats a path parameter (session.rename's session_id) is the path's.
  for (const [name, schema] of Object.entries(bodyProperties)) properties[name] = schema;
  for (const [name, schema] of Object.entries(query.properties)) properties[name] = schema;
  for (const [name, schema] of Object.entries(params.properties)) properties[name] = schema;
  const required = new Set([
    ...path,
    ...query.required,
    ...(Array.isArray(body?.required) ? body.required.map(String) : []),
  ]);
  const keyArgument = takesIdempotencyKey(operation) && !(IDEMPOTENCY_ARGUMENT in properties);
  if (keyArgument) properties[IDEMPOTENCY_ARGUMENT] = IDEMPOTENCY_KEY_SCHEMA;

  const input: JsonSchema = {
    type: 'object',
    properties,
    ...(required.size > 0 ? { required: [...required] } : {}),
    // Names the operation does not take are refused, as its HTTP call refuses them.
    additionalProperties:
      body && body.additionalProperties !== undefined ? body.additionalProperties : false,
    ...(body && isSchemaMap(body.$defs) ? { $defs: body.$defs } : {}),
  };
  const output = outputSchemaOf(operation.id);
  const modern: Tool = {
    name: operation.id,
    title: operation.title ?? operation.id,
    description: describe(operation, keyArgument),
    inputSchema: input,
    ...(output ? { outputSchema: output } : {}),
    annotations: annotationsOf(operation),
  };
  const { outputSchema: _any, ...withoutOutput } = modern;
  const legacy = output?.type === 'object' ? modern : withoutOutput;
  return {
    operation,
    scope: requiredScope(operation),
    plan: { path, query: new Set(inQuery), hasBody: Boolean(operation.body), keyArgument },
    modern,
    legacy,
  };
}

const IDEMPOTENCY_KEY_SCHEMA: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 255,
  pattern: '^[\\x20-\\x7e]+$',
  description:
    'Optional. Any unique text (1 to 255 printable ASCII characters) that makes this write safe ' +
    'to retry: a repeat with the same key and arguments within 24 h answers the first result ' +
    'without acting again.',
};

const isSchemaMap = (v: unknown): v is Record<string, JsonSchema> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The catalog's text, and what the gateway adds to it: cache, masking, cost, retries. */
function describe(operation: ConfiguredOperation, keyArgument: boolean): string {
  const parts = [
    operation.description ??
      operation.title ??
      `${operation.method} ${operation.path} on the platform.`,
  ];
  if (operation.declared) parts.push("Declared by this gateway's operator.");
  if (operation.cache) {
    parts.push(
      `Answers may come from the gateway's read cache (fresh for ${operation.cache.ttl_s} s).`,
    );
  }
  if (operation.secrets)
    parts.push('API key values are masked unless the token holds apikeys:admin.');
  if (operation.cost > 1) parts.push(`Counts ${operation.cost} units against the rate limit.`);
  if (keyArgument) {
    parts.push(`Pass ${IDEMPOTENCY_ARGUMENT} to make a retry safe.`);
  }
  return parts.join(' ');
}

function annotationsOf(operation: ConfiguredOperation): Tool['annotations'] {
  const read = operation.method === 'GET';
  return {
    readOnlyHint: read,
    destructiveHint: !read && (operation.effect?.destructive ?? operation.method !== 'POST'),
    idempotentHint: read || operation.method === 'PUT' || operation.method === 'DELETE',
    openWorldHint: operation.effect?.openWorld ?? false,
  };
}

const COMPONENT_REF = '#/components/schemas/';

/**
 * The platform's model of an operation's `data`, self-contained (its models under `$defs`),
 * or null where the catalog only knows "an object" or nothing.
 */
function outputSchemaOf(id: string): JsonSchema | null {
  let data = SUCCESS_DATA[id];
  if (!data) return null;
  // A model at the root is inlined: a bare $ref there says little to most clients.
  const bare = typeof data.$ref === 'string' ? MODELS[data.$ref.slice(COMPONENT_REF.length)] : null;
  if (bare) data = bare;
  if (!isSchemaMap(data.properties) && !Array.isArray(data.allOf) && data.type !== 'array') {
    return null;
  }
  const used = new Set<string>();
  const root = rewriteRefs(data, used);
  const defs: Record<string, JsonSchema> = {};
  for (let grew = true; grew; ) {
    grew = false;
    for (const name of [...used]) {
      const model = MODELS[name];
      if (defs[name] || !model) continue;
      defs[name] = rewriteRefs(model, used);
      grew = true;
    }
  }
  return Object.keys(defs).length > 0 ? { ...root, $defs: defs } : root;
}

/** A copy with OpenAPI component refs made `$defs` refs, noting each model named. */
function rewriteRefs(schema: JsonSchema, used: Set<string>): JsonSchema {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (!isObject(v)) return v;
    const out: JsonSchema = {};
    for (const [k, value] of Object.entries(v)) {
      if (k === '$ref' && typeof value === 'string' && value.startsWith(COMPONENT_REF)) {
        const name = value.slice(COMPONENT_REF.length);
        used.add(name);
        out.$ref = `#/$defs/${name}`;
      } else {
        out[k] = walk(value);
      }
    }
    return out;
  };
  return walk(schema) as JsonSchema;
}
