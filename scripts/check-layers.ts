/**
 * The layer rules of src/ (docs/ARCHITECTURE.md), checked: every Worker file
 * belongs to one layer, and imports only files of its own layer or of a layer
 * below, type imports included. src/types/ holds declarations only. Import
 * circles are Biome's to find (noImportCycles, in biome.json); this script is
 * the other half of `npm run lint`.
 *
 *   npx tsx scripts/check-layers.ts             check; exit 1 with one line per problem
 *   npx tsx scripts/check-layers.ts --picture   print the layers, top first (the
 *                                               block in docs/ARCHITECTURE.md)
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export interface Layer {
  name: string;
  /** Folders (ending in `/`) and files, relative to src/. */
  members: string[];
  what: string;
}

/** Bottom first: a layer may import its own and the ones before it, never a later one. */
export const LAYERS: Layer[] = [
  {
    name: 'types',
    members: ['types/'],
    what: 'shapes only: request context, settings, KV records',
  },
  {
    name: 'leaves',
    members: [
      'errors.ts',
      'log.ts',
      'bytes.ts',
      'hash.ts',
      'stats.ts',
      'waiters.ts',
      'version.ts',
      'duration.ts',
    ],
    what: 'the error catalog, logging, bytes, hashing, counters, waiting, durations in words',
  },
  { name: 'routes', members: ['routes/'], what: 'the route table: paths, schemas, overrides' },
  {
    name: 'metering',
    members: ['metering/'],
    what: 'what isolates and Durable Objects share: policies, lease protocol and windows, usage rows',
  },
  { name: 'tenants', members: ['tenants/'], what: 'KV records, token formats, key sealing' },
  {
    name: 'platform',
    members: ['upstream/', 'cache/'],
    what: 'the only code that calls the platform, and the read cache',
  },
  {
    name: 'guard',
    members: ['guard/', 'audit/'],
    what: 'the Durable Objects: TenantGuard and what it hosts, LeaseBroker, AuditLog',
  },
  {
    name: 'limits',
    members: ['limits/'],
    what: "the isolate's side of limits: lease, admission, usage buffer, RateLimit fields, region",
  },
  {
    name: 'steps',
    members: ['middleware/', 'observability/', 'settings.ts'],
    what: 'the steps of the chain before a handler',
  },
  {
    name: 'handlers',
    members: [
      'proxy.ts',
      'forward.ts',
      'usage-route.ts',
      'token-route.ts',
      'front-page.ts',
      'admin/',
      'browser/',
      'openapi/',
      'mcp/',
    ],
    what: 'routes and their handlers',
  },
  {
    name: 'entry',
    members: ['index.ts', 'app.ts', 'connect.ts', 'operator-entrypoint.ts'],
    what: 'the Worker entry, its operator entrypoint and the middleware chain',
  },
];

/** The one file outside src/ that Worker code may import. */
const OUTSIDE_ALLOWED = ['package.json'];

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Index into LAYERS of a path relative to src/, or -1. */
export function layerOf(file: string, layers: Layer[] = LAYERS): number {
  return layers.findIndex((l) =>
    l.members.some((m) => (m.endsWith('/') ? file.startsWith(m) : file === m)),
  );
}

/** Relative import specifiers of a module: imports, re-exports, `import()`, type-only or not. */
function specifiers(text: string): string[] {
  const info = ts.preProcessFile(text, true, true);
  return info.importedFiles.map((f) => f.fileName).filter((s) => s.startsWith('.'));
}

/** The file a relative specifier names: `x.ts`, `x/index.ts`, or `x` itself. */
function resolve(srcDir: string, from: string, spec: string, exists: (p: string) => boolean) {
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec));
  for (const candidate of [`${base}.ts`, `${base}/index.ts`, base]) {
    if (exists(path.join(srcDir, candidate))) return candidate;
  }
  return base;
}

/** A statement that leaves nothing at run time. */
function declarationOnly(s: ts.Statement): boolean {
  if (ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s)) return true;
  if (ts.isImportDeclaration(s)) return s.importClause?.isTypeOnly === true;
  if (ts.isExportDeclaration(s)) return s.isTypeOnly;
  return false;
}

/** Every problem found in `srcDir` (paths in messages relative to src/); none: []. */
export function checkLayers(srcDir: string, layers: Layer[] = LAYERS): string[] {
  const problems: string[] = [];
  const files = readdirSync(srcDir, { recursive: true, encoding: 'utf8' })
    .map((f) => f.split(path.sep).join('/'))
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('.d.ts'));
  const exists = (p: string) => {
    try {
      return readFileSync(p) !== null;
    } catch {
      return false;
    }
  };
  for (const file of files.sort()) {
    const own = layerOf(file, layers);
    if (own === -1) {
      problems.push(`${file}: in no layer (add it to LAYERS in scripts/check-layers.ts)`);
      continue;
    }
    const text = readFileSync(path.join(srcDir, file), 'utf8');
    for (const spec of specifiers(text)) {
      const target = resolve(srcDir, file, spec, exists);
      if (target.startsWith('../')) {
        if (!OUTSIDE_ALLOWED.includes(target.slice(3))) {
          problems.push(`${file}: imports ${target}, outside src/`);
        }
        continue;
      }
      const theirs = layerOf(target, layers);
      if (theirs > own) {
        const [low, high] = [layers[own]?.name, layers[theirs]?.name];
        problems.push(`${file}: imports ${target}, a higher layer (${low} imports ${high})`);
      }
    }
    if (layers[own]?.name === 'types') {
      const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest);
      for (const s of source.statements.filter((s) => !declarationOnly(s))) {
        const line = source.getLineAndCharacterOfPosition(s.getStart(source)).line + 1;
        problems.push(`${file}:${line}: types/ holds type declarations and type imports only`);
      }
    }
  }
  return problems;
}

/** The layers as docs/ARCHITECTURE.md draws them, top first. */
export function picture(layers: Layer[] = LAYERS): string {
  const rows = [...layers].reverse().map((l) => {
    const members = l.members.map((m) => `src/${m}`).join(' ');
    return `${l.name.padEnd(9)} ${members}\n${' '.repeat(10)}${l.what}`;
  });
  return rows.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  if (process.argv.includes('--picture')) {
    console.log(picture());
  } else {
    const problems = checkLayers(path.join(ROOT, 'src'));
    for (const p of problems) console.error(`layers: ${p}`);
    if (problems.length > 0) process.exit(1);
    console.log(`layers: src/ keeps its ${LAYERS.length} layers (docs/ARCHITECTURE.md)`);
  }
}
