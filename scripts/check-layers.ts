/**
 * The layer rules of src/ (docs/ARCHITECTURE.md), checked: every Worker file
 * belongs to one layer, and imports only files of its own layer or of a layer
 * below, type imports included. src/types/ holds declarations only. And who may
 * touch which table (docs/STORAGE.md): a Durable Object's SQLite tables are named
 * only in its own folder, and in the TenantGuard only in the folder of the part that
 * owns them; a part reads another part only through what it is handed (type imports
 * only). Import circles are Biome's to find (noImportCycles, in biome.json); this
 * script is the other half of `npm run lint`.
 *
 *   npx tsx scripts/check-layers.ts             check; exit 1 with one line per problem
 *   npx tsx scripts/check-layers.ts --picture   print the layers, top first (the
 *                                               block in docs/ARCHITECTURE.md)
 *   npx tsx scripts/check-layers.ts --tables    print who owns which table (the
 *                                               table in docs/STORAGE.md)
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
      'once-per.ts',
      'version.ts',
      'duration.ts',
    ],
    what: 'the error catalog, logging, bytes, hashing, counters, waiting, made once, durations in words',
  },
  {
    name: 'operations',
    members: ['operations/'],
    what: 'the operation table: paths, schemas, overrides',
  },
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
    name: 'storage',
    members: ['objects/tables.ts'],
    what: "how the fleet's own Durable Objects start: their SQLite tables made and brought up to date",
  },
  {
    name: 'reports',
    members: ['objects/audit/', 'objects/fleet/', 'objects/config/'],
    what: "Durable Objects that call no other: AuditLog, FleetBoard (a tenant's guard reports to them), ConfigBook",
  },
  {
    name: 'clients',
    members: ['objects/clients/'],
    what: 'the Durable Object of the OAuth clients registered with the gateway: OAuthClients',
  },
  {
    name: 'tenant',
    members: ['objects/tenant/'],
    what: 'the TenantGuard Durable Object, one per tenant, and what it hosts',
  },
  {
    name: 'brokers',
    members: ['objects/broker/', 'objects/plans/'],
    what: "Durable Objects that call tenants' guards: LeaseBroker, PlanBook",
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
      'oauth/',
      'partner/',
      'billing/',
    ],
    what: 'routes and their handlers',
  },
  {
    name: 'entry',
    members: ['index.ts', 'app.ts', 'connect.ts', 'operator-entrypoint.ts'],
    what: 'the Worker entry, its operator entrypoint and the middleware chain',
  },
];

/** Who may touch a Durable Object's tables: one folder (or file) of src/, and what it owns. */
export interface TableOwner {
  /** A folder (ending in `/`) or file, relative to src/. */
  place: string;
  owner: string;
  tables: string[];
  /** Rows of the TenantGuard's `settings` table the owner reads and writes (SettingsView). */
  settings?: string[];
  /** Tables of objects from before, which a migration reads and drops. */
  migrated?: string[];
}

/**
 * Each Durable Object's tables, by the folder that may name them; in the TenantGuard,
 * each part's (src/objects/tenant/parts.ts). A new table goes here first: the check
 * refuses a table no owner lists, or one named outside its owner's place.
 */
export const TABLE_OWNERS: TableOwner[] = [
  {
    place: 'objects/tenant/limits/',
    owner: 'TenantGuard, limits and leases',
    tables: ['slots', 'stats', 'lease_holders'],
    // Objects from before slots kept `counters`, read once into `slots` and dropped.
    migrated: ['counters'],
    settings: ['limits', 'plan'],
  },
  {
    place: 'objects/tenant/tokens/',
    owner: 'TenantGuard, tokens',
    tables: ['tokens', 'token_audit_outbox', 'token_states', 'token_limits', 'token_meters'],
    settings: ['tokens_adopted'],
  },
  {
    place: 'objects/tenant/grants/',
    owner: 'TenantGuard, grants (OAuth and partner keys)',
    tables: ['oauth_grants', 'oauth_spent_refresh'],
    settings: ['partner_access'],
  },
  {
    place: 'objects/tenant/record/',
    owner: 'TenantGuard, the tenant record',
    tables: ['tenant_record'],
    settings: ['disabled', 'cache_version'],
  },
  {
    place: 'objects/tenant/idempotency/',
    owner: 'TenantGuard, idempotency',
    tables: ['idempotency'],
  },
  {
    place: 'objects/tenant/recent/',
    owner: 'TenantGuard, recent requests',
    tables: ['recent_requests'],
  },
  {
    place: 'objects/tenant/history/',
    owner: 'TenantGuard, usage history',
    tables: ['usage_hourly', 'refusals_hourly', 'key_rejections_hourly'],
    // Refusals from before operations were named: copied under the new key, then dropped.
    migrated: ['refusals_hourly_before_routes'],
    settings: ['retention_days'],
  },
  {
    place: 'objects/tenant/export/',
    owner: 'TenantGuard, usage export',
    tables: ['export_days', 'export_minutes'],
  },
  {
    place: 'objects/tenant/alerts/',
    owner: 'TenantGuard, alerts',
    tables: ['alert_config', 'alerts_sent', 'alert_outbox', 'alert_log'],
  },
  {
    place: 'objects/tenant/settings.ts',
    owner: 'TenantGuard, its settings (rows by part, above)',
    tables: ['settings'],
  },
  { place: 'objects/plans/', owner: 'PlanBook', tables: ['plans', 'members', 'counter'] },
  { place: 'objects/fleet/', owner: 'FleetBoard', tables: ['tenant_hours'] },
  { place: 'objects/audit/', owner: 'AuditLog', tables: ['entries', 'episodes'] },
  { place: 'objects/config/', owner: 'ConfigBook', tables: ['refs', 'applies', 'apply_lock'] },
  { place: 'objects/clients/', owner: 'OAuthClients', tables: ['clients'] },
];

/** The TenantGuard's parts: each folder below it is one (tenant-guard.ts hands them out). */
const PARTS_DIR = 'objects/tenant/';
/** SQLite's own tables and table functions, which anyone may read. */
const SYSTEM_TABLES = ['sqlite_master', 'json_each'];

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
    problems.push(...tableProblems(file, text), ...partImportProblems(srcDir, file, text, exists));
    if (layers[own]?.name === 'types') {
      const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest);
      for (const s of source.statements.filter((s) => !declarationOnly(s))) {
        const line = source.getLineAndCharacterOfPosition(s.getStart(source)).line + 1;
        problems.push(`${file}:${line}: types/ holds type declarations and type imports only`);
      }
    }
  }
  problems.push(...unlistedTables(files, (f) => readFileSync(path.join(srcDir, f), 'utf8')));
  return problems;
}

/** The tables a file names in its SQL (upper-case keywords, lower-case tables). */
function tablesNamed(text: string): Set<string> {
  const named = new Set<string>();
  const sql =
    /\b(?:FROM|INTO|UPDATE|JOIN|ON|TABLE(?:\s+IF\s+(?:NOT\s+)?EXISTS)?)\s+([a-z_][a-z0-9_]*)\b|table_info\(([a-z_][a-z0-9_]*)\)/g;
  for (const m of text.matchAll(sql)) named.add(m[1] ?? m[2] ?? '');
  for (const t of SYSTEM_TABLES) named.delete(t);
  return named;
}

/** The owner whose place holds `file` (the longest match), if any. */
function ownerOf(file: string, owners: TableOwner[] = TABLE_OWNERS): TableOwner | undefined {
  return owners
    .filter((o) => (o.place.endsWith('/') ? file.startsWith(o.place) : file === o.place))
    .sort((a, b) => b.place.length - a.place.length)[0];
}

/** A table named outside the place of its owner; a setting of another part. */
function tableProblems(file: string, text: string, owners: TableOwner[] = TABLE_OWNERS): string[] {
  const problems: string[] = [];
  const mine = ownerOf(file, owners);
  for (const table of tablesNamed(text)) {
    if (mine?.tables.includes(table) || mine?.migrated?.includes(table)) continue;
    const theirs = owners.find((o) => o.tables.includes(table) || o.migrated?.includes(table));
    problems.push(
      theirs
        ? `${file}: touches ${table}, a table of ${theirs.owner} (${theirs.place})`
        : `${file}: touches ${table}, a table no owner lists (add it to TABLE_OWNERS)`,
    );
  }
  for (const m of text.matchAll(/SettingsView<([^>]+)>/g)) {
    for (const name of (m[1] ?? '').match(/'([a-z_]+)'/g) ?? []) {
      const setting = name.slice(1, -1);
      if (!mine?.settings?.includes(setting)) {
        problems.push(`${file}: takes the setting ${setting}, not its part's (TABLE_OWNERS)`);
      }
    }
  }
  return problems;
}

/** Tables an owner lists that no file creates (a stale list); owners whose place is in the tree. */
function unlistedTables(files: string[], read: (file: string) => string): string[] {
  const created = new Set<string>();
  for (const file of files) {
    for (const m of read(file).matchAll(/CREATE TABLE (?:IF NOT EXISTS )?([a-z_][a-z0-9_]*)/g)) {
      created.add(m[1] ?? '');
    }
  }
  const problems: string[] = [];
  for (const owner of TABLE_OWNERS) {
    if (!files.some((f) => ownerOf(f) === owner)) continue;
    for (const table of owner.tables) {
      if (!created.has(table))
        problems.push(`${owner.place}: lists ${table}, which no file creates`);
    }
  }
  return problems;
}

/** The part (its folder, relative to src/) of a TenantGuard file; null: the guard's own files. */
function partOf(file: string): string | null {
  if (!file.startsWith(PARTS_DIR)) return null;
  const rest = file.slice(PARTS_DIR.length).split('/');
  return rest.length > 1 ? `${PARTS_DIR}${rest[0]}/` : null;
}

/** A part importing another part's code (not its types): what it uses of it is handed to it. */
function partImportProblems(
  srcDir: string,
  file: string,
  text: string,
  exists: (p: string) => boolean,
): string[] {
  const part = partOf(file);
  if (!part) return [];
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest);
  const problems: string[] = [];
  for (const s of source.statements) {
    if (!ts.isImportDeclaration(s) || !ts.isStringLiteral(s.moduleSpecifier)) continue;
    const spec = s.moduleSpecifier.text;
    if (!spec.startsWith('.') || declarationOnly(s) || typeOnlyNames(s)) continue;
    const target = resolve(srcDir, file, spec, exists);
    const theirs = partOf(target);
    if (theirs && theirs !== part) {
      problems.push(`${file}: imports ${target}, another part's code (take it as a type)`);
    }
  }
  return problems;
}

/** `import { type A, type B } from …`: every name a type. */
function typeOnlyNames(s: ts.ImportDeclaration): boolean {
  const bindings = s.importClause?.namedBindings;
  return (
    !s.importClause?.name &&
    bindings !== undefined &&
    ts.isNamedImports(bindings) &&
    bindings.elements.every((e) => e.isTypeOnly)
  );
}

/** Who owns which table, as docs/STORAGE.md shows it (a Markdown table). */
export function tablesPicture(owners: TableOwner[] = TABLE_OWNERS): string {
  const rows = owners.map((o) => {
    const code = (names: string[]) => names.map((n) => `\`${n}\``).join(', ');
    const settings = o.settings ? `; settings ${code(o.settings)}` : '';
    const migrated = o.migrated ? ` (from before: ${code(o.migrated)})` : '';
    return `| ${o.owner} | \`src/${o.place}\` | ${code(o.tables)}${settings}${migrated} |`;
  });
  return ['| Owner | May touch them | Tables |', '|---|---|---|', ...rows].join('\n');
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
  } else if (process.argv.includes('--tables')) {
    console.log(tablesPicture());
  } else {
    const problems = checkLayers(path.join(ROOT, 'src'));
    for (const p of problems) console.error(`layers: ${p}`);
    if (problems.length > 0) process.exit(1);
    console.log(`layers: src/ keeps its ${LAYERS.length} layers (docs/ARCHITECTURE.md)`);
  }
}
