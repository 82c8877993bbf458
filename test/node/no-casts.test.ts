/**
 * The Worker's code states its types instead of forcing them: no double cast
 * through `unknown` (`x as unknown as T`), which silences every check between
 * the two types (issue 42: one was back in the fleet board, src/objects/fleet/). Tests
 * may still use one to reach a browser's globals.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src', import.meta.url));

/** `file:line` of each `… as unknown as …` in a TypeScript text. */
function doubleCasts(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const isCast = (n: ts.Node): n is ts.AsExpression | ts.TypeAssertion =>
    ts.isAsExpression(n) || ts.isTypeAssertionExpression(n);
  const visit = (node: ts.Node) => {
    if (isCast(node)) {
      let inner: ts.Expression = node.expression;
      while (ts.isParenthesizedExpression(inner)) inner = inner.expression;
      if (isCast(inner) && inner.type.kind === ts.SyntaxKind.UnknownKeyword) {
        const { line } = source.getLineAndCharacterOfPosition(node.getStart());
        found.push(`${file}:${line + 1}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('casts through unknown', () => {
  it('are found, whatever the spacing, and only where they are', () => {
    expect(
      doubleCasts('a.ts', 'const a = (b as\n  unknown) as string;\nconst c = d as unknown;\n'),
    ).toEqual(['a.ts:1']);
    expect(doubleCasts('a.ts', '// x as unknown as T\nconst s = "as unknown as";\n')).toEqual([]);
  });

  it('are in no Worker file', () => {
    const files = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).filter(
      (f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.endsWith('.d.ts'),
    );
    expect(files.length).toBeGreaterThan(50);
    const found = files.flatMap((f) => doubleCasts(f, readFileSync(path.join(SRC, f), 'utf8')));
    expect(found).toEqual([]);
  });
});
