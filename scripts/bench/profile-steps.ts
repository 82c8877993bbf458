/**
 * The steps of ./profile.ts's table: which source module of the (unminified)
 * gateway bundle a profiled function belongs to, and which step of a request
 * that module does. esbuild marks where each module starts with a
 * `// src/…` or `// node_modules/…` comment line.
 */

export interface ModuleRange {
  /** First line (0-based, as V8's profile counts them). */
  start: number;
  module: string;
}

/** Each module's first line in the bundle, ascending. */
export function moduleRanges(bundle: string): ModuleRange[] {
  const ranges: ModuleRange[] = [];
  const lines = bundle.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = /^\/\/ ((?:src|node_modules|\.\.\/)[^\s]*\.[cm]?[jt]s)$/.exec(lines[i]!);
    if (m) ranges.push({ start: i, module: m[1]! });
  }
  return ranges;
}

function moduleAt(line: number, ranges: ModuleRange[]): string {
  let lo = 0;
  let hi = ranges.length - 1;
  let found = '(bundle prelude)';
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (ranges[mid]!.start <= line) {
      found = ranges[mid]!.module;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** Module path prefix → step; the first match wins. */
const STEPS: [prefix: string, step: string][] = [
  ['node_modules/hono/dist/middleware/request-id', 'request id (hono/request-id)'],
  ['node_modules/hono/', 'Hono: routing, Context, middleware chain'],
  ['node_modules/zod/', 'zod (validation schemas)'],
  ['node_modules/@hono/zod-validator', 'zod (validation schemas)'],
  ['src/app.ts', 'app middleware (settings, count)'],
  ['src/settings.ts', 'settings'],
  ['src/observability/request-log.ts', 'request log line'],
  ['src/log.ts', 'request log line'],
  ['src/observability/trace', 'trace context'],
  ['src/observability/operation-id.ts', 'operation id'],
  ['src/middleware/cors.ts', 'CORS'],
  ['src/middleware/preauth.ts', 'token → tenant (auth)'],
  ['src/middleware/auth.ts', 'token → tenant (auth)'],
  ['src/tenants/', 'token → tenant (auth)'],
  ['src/hash.ts', 'token → tenant (auth)'],
  ['src/middleware/validate.ts', 'request validation'],
  ['src/operations/', 'operation table and handlers'],
  ['src/proxy.ts', 'operation table and handlers'],
  ['src/middleware/limits.ts', 'limits (lease, usage buffer)'],
  ['src/limits/', 'limits (lease, usage buffer)'],
  ['src/metering/', 'limits (lease, usage buffer)'],
  ['src/middleware/idempotency.ts', 'idempotency'],
  ['src/cache/', 'read cache (L1, key)'],
  ['src/forward.ts', 'upstream call and answer checks'],
  ['src/upstream/', 'upstream call and answer checks'],
  ['src/bytes.ts', 'upstream call and answer checks'],
  ['src/errors.ts', 'envelope and errors'],
  ['src/stats.ts', 'app middleware (settings, count)'],
  ['src/waiters.ts', 'waitUntil bookkeeping'],
  ['src/mcp/', 'MCP: JSON-RPC, tools, the call and its result'],
  ['src/observability/via.ts', 'MCP: JSON-RPC, tools, the call and its result'],
];

/** The step a profile node's self time counts for, and its module (for the function list). */
export function stepOf(
  functionName: string,
  url: string,
  line: number,
  ranges: ModuleRange[],
): { step: string; module: string } {
  if (!url) {
    if (functionName === '(program)')
      return { step: 'workerd outside JS (HTTP, sockets, streams)', module: '' };
    if (functionName === '(garbage collector)') return { step: 'garbage collection', module: '' };
    return { step: `V8 builtins (${functionName})`, module: '' };
  }
  if (!url.endsWith('index.js')) return { step: `runtime JS (${url})`, module: url };
  const module = moduleAt(line, ranges);
  const match = STEPS.find(([prefix]) => module.startsWith(prefix));
  return { step: match ? match[1] : module, module };
}
