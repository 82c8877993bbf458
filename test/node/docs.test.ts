/**
 * The docs hold together: every relative link in README.md and docs/*.md
 * resolves (the file exists; an #anchor matches a heading, by GitHub's slug
 * rules), every setting src/settings.ts parses is in docs/CONFIGURATION.md,
 * every `(docs/PAGE.md, "Heading")` pointer in a comment of src/ names a real
 * page and heading, and the README stays short. (test/docs.test.ts checks the
 * error codes against docs/ERRORS.md.)
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const README_MAX_LINES = 250;

const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const PAGES = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** The text outside fenced code blocks, line numbers kept (fenced lines become empty). */
function prose(markdown: string): string[] {
  let fence: string | null = null;
  return markdown.split('\n').map((line) => {
    const opener = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence === null && opener) {
      fence = opener;
      return '';
    }
    if (fence !== null) {
      if (line.trim().startsWith(fence)) fence = null;
      return '';
    }
    return line;
  });
}

/** GitHub's anchor for a heading's text: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a page has, repeated headings numbered as GitHub does (`-1`, `-2`). */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of prose(markdown)) {
    const text = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (text === undefined) continue;
    const base = slug(text);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

interface Link {
  page: string;
  line: number;
  target: string;
}

/** Relative links of a page, outside code: `[text](target)`. */
function relativeLinks(page: string, markdown: string): Link[] {
  const links: Link[] = [];
  prose(markdown).forEach((line, i) => {
    const withoutCode = line.replace(/`[^`]*`/g, '');
    for (const m of withoutCode.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = m[1] ?? '';
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
      links.push({ page, line: i + 1, target });
    }
  });
  return links;
}

/** Why a link does not resolve, or null when it does. */
function brokenLink(link: Link, readPage: (file: string) => string | null): string | null {
  const [file = '', anchor] = link.target.split('#', 2);
  const resolved = file
    ? path.posix.normalize(path.posix.join(path.posix.dirname(link.page), file))
    : link.page;
  const text = readPage(resolved);
  if (text === null) return `${resolved} does not exist`;
  if (anchor === undefined || !resolved.endsWith('.md')) return null;
  return anchors(text).has(anchor) ? null : `${resolved} has no heading #${anchor}`;
}

function readIfExists(file: string): string | null {
  const full = path.join(ROOT, file);
  if (!existsSync(full)) return null;
  return file.endsWith('.md') ? readFileSync(full, 'utf8') : '';
}

interface Pointer {
  file: string;
  page: string;
  heading: string | null;
}

/**
 * `(docs/PAGE.md, "Heading")` and `(docs/PAGE.md)` in a source file's
 * comments, a pointer broken over comment lines included; a `(README, …)`
 * pointer is reported with page README (the README holds no topics now).
 */
function pointers(file: string, source: string): Pointer[] {
  const joined = source.replace(/\s*\n\s*(?:\*(?!\/)|\/\/)?\s*/g, ' ');
  const out: Pointer[] = [];
  for (const m of joined.matchAll(/\((docs\/[\w.-]+\.md|README(?:\.md)?)(?:,\s*"([^"]+)")?/g)) {
    out.push({ file, page: m[1] ?? '', heading: m[2] ?? null });
  }
  return out;
}

/** Why a pointer is wrong, or null. */
function brokenPointer(p: Pointer, readPage: (file: string) => string | null): string | null {
  if (p.page === 'README') return 'points at the README; name the docs/ page and heading';
  const text = readPage(p.page);
  if (text === null) return `${p.page} does not exist`;
  if (p.heading === null) return null;
  return anchors(text).has(slug(p.heading)) ? null : `${p.page} has no heading "${p.heading}"`;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return sourceFiles(rel);
    return e.name.endsWith('.ts') ? [rel] : [];
  });
}

/** The keys of the settings schema, read from src/settings.ts itself. */
async function settingNames(): Promise<string[]> {
  // A computed path keeps src/ (Workers types) out of this project's type check.
  const mod: unknown = await import(path.join(ROOT, 'src', 'settings.ts'));
  const schema =
    typeof mod === 'object' && mod !== null ? Reflect.get(mod, 'settingsSchema') : null;
  const shape = typeof schema === 'object' && schema !== null ? Reflect.get(schema, 'shape') : null;
  if (typeof shape !== 'object' || shape === null)
    throw new Error('src/settings.ts exports no settingsSchema');
  return Object.keys(shape);
}

function undocumentedSettings(names: string[], configuration: string): string[] {
  return names.filter((name) => !new RegExp(`^\\| \`${name}\` \\|`, 'm').test(configuration));
}

describe('links in README.md and docs/', () => {
  const links = PAGES.flatMap((page) => relativeLinks(page, read(page)));

  it('finds the links (README links every docs/ page)', () => {
    const fromReadme = new Set(
      links.filter((l) => l.page === 'README.md').map((l) => l.target.split('#')[0]),
    );
    for (const page of PAGES.filter((p) => p !== 'README.md')) {
      expect(fromReadme, `README.md links ${page}`).toContain(page);
    }
  });

  it('every relative link resolves, anchors included', () => {
    const broken = links.flatMap((l) => {
      const why = brokenLink(l, readIfExists);
      return why ? [`${l.page}:${l.line} (${l.target}): ${why}`] : [];
    });
    expect(broken).toEqual([]);
  });

  it('the README links the layer picture in docs/ARCHITECTURE.md', () => {
    expect(links).toContainEqual(
      expect.objectContaining({
        page: 'README.md',
        target: 'docs/ARCHITECTURE.md#the-layers-top-first',
      }),
    );
  });
});

describe('docs/CONFIGURATION.md', () => {
  it('has a row for every setting src/settings.ts parses', async () => {
    const names = await settingNames();
    expect(names).toContain('PLATFORM_BASE_URL');
    expect(undocumentedSettings(names, read('docs/CONFIGURATION.md'))).toEqual([]);
  });
});

describe('pointers from src/ comments to the docs', () => {
  const found = sourceFiles('src').flatMap((file) => pointers(file, read(file)));

  it('finds the pointers', () => {
    expect(found.filter((p) => p.heading !== null).length).toBeGreaterThan(20);
  });

  it('each names an existing page and heading', () => {
    const broken = found.flatMap((p) => {
      const why = brokenPointer(p, readIfExists);
      return why ? [`${p.file}: (${p.page}, "${p.heading}"): ${why}`] : [];
    });
    expect(broken).toEqual([]);
  });
});

describe('README.md', () => {
  it(`is at most ${README_MAX_LINES} lines`, () => {
    expect(read('README.md').trimEnd().split('\n').length).toBeLessThanOrEqual(README_MAX_LINES);
  });
});

describe('the checks themselves', () => {
  it('slugs headings as GitHub does', () => {
    expect(slug('2. Why a custom domain (or route), not workers.dev')).toBe(
      '2-why-a-custom-domain-or-route-not-workersdev',
    );
    expect(slug('Durable Object: `TENANT_GUARD` (class `TenantGuard`)')).toBe(
      'durable-object-tenant_guard-class-tenantguard',
    );
    expect([...anchors('# A\n## A\n```\n# not a heading\n```\n## B')]).toEqual(['a', 'a-1', 'b']);
  });

  it('joins a pointer broken over comment lines', () => {
    const source = '/**\n * late (docs/LIMITS.md,\n * "Counting").\n */';
    expect(pointers('x.ts', source)).toEqual([
      { file: 'x.ts', page: 'docs/LIMITS.md', heading: 'Counting' },
    ]);
  });
});
