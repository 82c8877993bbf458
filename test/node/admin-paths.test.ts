/**
 * The console (ui/) and the scripts (the CLI, the local stack, the bench) call the
 * operator API only through the client typed from its definitions (ui/lib/admin-client.ts):
 * no string in their code is a path of it. Comments and messages may name a route; a
 * string or template part that starts with `/admin/` is a call written by hand.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Each string literal and template part of a TypeScript file that starts with an operator path. */
function adminPathsIn(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (
      ts.isStringLiteral(node) ||
      ts.isNoSubstitutionTemplateLiteral(node) ||
      ts.isTemplateHead(node) ||
      ts.isTemplateMiddle(node) ||
      ts.isTemplateTail(node)
    ) {
      if (/^\/admin(\/|\?|$)/.test(node.text)) {
        const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
        found.push(`${file}:${line}: ${node.text}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function codeFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .map((f) => path.join(dir, f))
    .filter((f) => /\.tsx?$/.test(f) && !f.endsWith('.d.ts'));
}

describe('operator API paths', () => {
  it('are written by hand nowhere in ui/ or scripts/', () => {
    const found = [...codeFiles('ui'), ...codeFiles('scripts')].flatMap((f) =>
      adminPathsIn(f, readFileSync(path.join(ROOT, f), 'utf8')),
    );
    expect(found).toEqual([]);
  });

  it('are found in strings and template parts, not in comments or messages', () => {
    // A made-up file's source: its placeholders are the file's, not this test's.
    const dollar = '$';
    const text = [
      '// GET /admin/tenants lists them',
      "const a = '/admin/tenants';",
      `const b = \`${dollar}{base}/admin/tenants/${dollar}{id}\`;`,
      `const c = \`/admin/plans/${dollar}{name}\`;`,
      "const note = 'no GET /admin/stats (404)';",
    ].join('\n');
    expect(adminPathsIn('x.ts', text)).toEqual([
      'x.ts:2: /admin/tenants',
      'x.ts:3: /admin/tenants/',
      'x.ts:4: /admin/plans/',
    ]);
  });
});
