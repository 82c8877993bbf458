/**
 * `npm run admin -- operations import <openapi.json>`: a PLATFORM_OPERATIONS value
 * (docs/CONFIGURATION.md, "Declaring operations") for the operations of an OpenAPI 3
 * document that the gateway does not serve yet, for an operator to review before
 * setting it. The CLI then has the gateway check the value (POST
 * /admin/operations/check) and leaves out what it would refuse.
 */

type Json = Record<string, unknown>;

/** An operation the gateway serves already: its method and path (`{name}` placeholders). */
export interface Known {
  method: string;
  path: string;
}

export interface Imported {
  /** The PLATFORM_OPERATIONS value: new operations by id. */
  operations: Record<string, Json>;
  /** What was left out, and why (one line each). */
  skipped: string[];
  /** What the operator should look at before setting the value. */
  notes: string[];
  /** Each operation imported, by id: its method and path and the scope a token needs for it. */
  scopes: Record<string, string>;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const SCALARS = ['string', 'integer', 'number', 'boolean'];
const isObject = (v: unknown): v is Json =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** `/a/{x}/b` and `/a/{y}/b` are one path: placeholders compared as placeholders. */
const pathKey = (method: string, path: string) =>
  `${method.toUpperCase()} ${path.replace(/\{[^}]+\}/g, '{}').replace(/:[A-Za-z_]\w*/g, '{}')}`;

export function importOperations(doc: unknown, known: Known[]): Imported {
  if (!isObject(doc) || typeof doc.openapi !== 'string' || !doc.openapi.startsWith('3.')) {
    throw new Error('not an OpenAPI 3 document (no "openapi": "3.x")');
  }
  const served = new Set(known.map((k) => pathKey(k.method, k.path)));
  const resolve = refResolver(doc);
  const operations: Record<string, Json> = {};
  const skipped: string[] = [];
  const notes: string[] = [];
  const scopes: Record<string, string> = {};
  const paths = isObject(doc.paths) ? doc.paths : {};
  for (const [path, item] of Object.entries(paths)) {
    if (!isObject(item)) continue;
    for (const method of METHODS) {
      const op = item[method];
      if (!isObject(op)) continue;
      const where = `${method.toUpperCase()} ${path}`;
      if (served.has(pathKey(method, path))) {
        skipped.push(`${where}: the gateway serves it already`);
        continue;
      }
      const entry = entryFor(method, path, op, item, doc, resolve, notes);
      if (typeof entry === 'string') {
        skipped.push(`${where}: ${entry}`);
        continue;
      }
      const wanted = operationIdFor(op, method, path);
      let id = wanted;
      for (let n = 2; id in operations; n++) id = `${wanted}_${n}`;
      operations[id] = entry;
      const given = typeof op.operationId === 'string' ? op.operationId : null;
      if (given !== null && given !== id) {
        notes.push(
          `${where}: operationId ${given} is ${id} here (gateway ids are lower-case words of ` +
            'letters, digits, _ or -, joined by dots)',
        );
      }
      // What a token needs to call it: its group's read scope for GET, else its write scope.
      scopes[id] =
        `${id}: ${where}, needs the scope ${entry.group}:${method === 'get' ? 'read' : 'write'}`;
    }
  }
  return { operations, skipped, notes, scopes };
}

function entryFor(
  method: string,
  path: string,
  op: Json,
  item: Json,
  doc: Json,
  resolve: (schema: unknown) => unknown,
  notes: string[],
): Json | string {
  const where = `${method.toUpperCase()} ${path}`;
  const parameters = [
    ...(Array.isArray(item.parameters) ? item.parameters : []),
    ...(Array.isArray(op.parameters) ? op.parameters : []),
  ]
    .map(resolve)
    .filter(isObject);
  const query: Json = {};
  const queryRequired: string[] = [];
  const params: Json = {};
  for (const p of parameters) {
    const name = String(p.name ?? '');
    const schema = isObject(p.schema) ? p.schema : { type: 'string' };
    if (p.in === 'query') {
      if (!SCALARS.includes(String(schema.type ?? 'string'))) {
        notes.push(
          `${where}: query parameter ${name} (${String(schema.type)}) left out: query values are scalars`,
        );
        continue;
      }
      query[name] = schema;
      if (p.required === true) queryRequired.push(name);
    } else if (p.in === 'path') params[name] = schema;
  }
  const entry: Json = {
    method: method.toUpperCase(),
    path,
    credential: credentialOf(op, doc, where, notes),
    group: groupOf(op, path),
  };
  if (Object.keys(params).length > 0) {
    entry.params = { type: 'object', properties: params, required: Object.keys(params) };
  }
  if (Object.keys(query).length > 0) {
    entry.query = {
      type: 'object',
      properties: query,
      ...(queryRequired.length > 0 ? { required: queryRequired } : {}),
    };
  }
  const body = isObject(op.requestBody) ? resolve(op.requestBody) : undefined;
  if (isObject(body) && isObject(body.content)) {
    const json = body.content['application/json'];
    if (!isObject(json))
      return `its body is ${Object.keys(body.content).join(', ')}: only JSON bodies can be declared`;
    entry.body = resolve(isObject(json.schema) ? json.schema : { type: 'object' });
  }
  if (method === 'get') notes.push(`${where}: not cached; add "cache" if its answer may be`);
  return entry;
}

/** The platform's current client sends x-api-key; a scheme on Authorization says otherwise. */
function credentialOf(op: Json, doc: Json, where: string, notes: string[]): string {
  const schemes =
    isObject(doc.components) && isObject(doc.components.securitySchemes)
      ? doc.components.securitySchemes
      : {};
  const security = Array.isArray(op.security)
    ? op.security
    : Array.isArray(doc.security)
      ? doc.security
      : [];
  const names = security.filter(isObject).flatMap((s) => Object.keys(s));
  for (const name of names) {
    const scheme = schemes[name];
    if (!isObject(scheme)) continue;
    if (scheme.type === 'apiKey' && scheme.in === 'header') {
      const header = String(scheme.name ?? '').toLowerCase();
      if (header === 'x-api-key' || header === 'authorization') return header;
    }
    if (scheme.type === 'http') return 'authorization';
  }
  notes.push(`${where}: no security scheme names its header; x-api-key assumed`);
  return 'x-api-key';
}

/** Its first tag, or its first path segment that is no placeholder, as a group name. */
function groupOf(op: Json, path: string): string {
  const tag = Array.isArray(op.tags) && typeof op.tags[0] === 'string' ? op.tags[0] : undefined;
  const segment = path.split('/').find((s) => s && !s.startsWith('{') && s !== 'dashboard');
  return slug(tag ?? segment ?? 'platform', '_').slice(0, 32) || 'platform';
}

/** The gateway's own rule for an operation id (src/operations/declared.ts). */
const GATEWAY_ID = /^[a-z][a-z0-9_-]{0,31}(\.[a-z][a-z0-9_-]{0,31}){0,3}$/;

/**
 * operationId as it is when the gateway takes it (`widget.list`), else as the gateway's
 * ids are written, word by word (`getProductList` → `get_product_list`).
 */
function operationIdFor(op: Json, method: string, path: string): string {
  const raw = typeof op.operationId === 'string' ? op.operationId : undefined;
  if (raw && GATEWAY_ID.test(raw)) return raw;
  const words = raw
    ? raw.split('.').map((part) => slug(part, '_'))
    : [
        method,
        ...path
          .split('/')
          .filter((s) => s && !s.startsWith('{'))
          .map((s) => slug(s, '_')),
      ];
  const id = words.filter(Boolean).join('.').slice(0, 64).replace(/\.+$/, '');
  return /^[a-z]/.test(id) ? id : `op.${id}`;
}

function slug(text: string, sep: string): string {
  return text
    .replace(/([a-z0-9])([A-Z])/g, `$1${sep}$2`)
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, sep)
    .replace(new RegExp(`^${sep}+|${sep}+$`, 'g'), '');
}

/**
 * Inlines local `$ref`s (`#/components/…`): the gateway's schemas are self-contained. A
 * reference to itself, however deep, becomes `{}` (any value) rather than an endless copy.
 */
function refResolver(doc: Json) {
  const lookup = (ref: string): unknown => {
    let node: unknown = doc;
    for (const part of ref.replace(/^#\//, '').split('/')) {
      if (!isObject(node)) return undefined;
      node = node[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    }
    return node;
  };
  const inline = (value: unknown, seen: string[]): unknown => {
    if (Array.isArray(value)) return value.map((v) => inline(v, seen));
    if (!isObject(value)) return value;
    if (typeof value.$ref === 'string') {
      const ref = value.$ref;
      if (!ref.startsWith('#/') || seen.includes(ref)) return {};
      return inline(lookup(ref), [...seen, ref]);
    }
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, inline(v, seen)]));
  };
  return (value: unknown) => inline(value, []);
}
