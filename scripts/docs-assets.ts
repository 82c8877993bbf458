/**
 * Puts the API reference page's script (Scalar's standalone bundle, from
 * node_modules) where Workers static assets serve it: build/assets/docs/
 * scalar.js → GET /docs/scalar.js. scripts/assets.ts calls it, with the
 * browser pages' build. It copies when the file is missing, of another size
 * or older than the package's.
 */
import { copyFileSync, mkdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const ASSETS_DIR = path.join(ROOT, 'build', 'assets');

export function ensureDocsAssets(): void {
  const source = createRequire(import.meta.url).resolve(
    '@scalar/api-reference/browser/standalone.js',
  );
  const target = path.join(ASSETS_DIR, 'docs', 'scalar.js');
  const stamp = (file: string) => {
    try {
      const { size, mtimeMs } = statSync(file);
      return { size, mtimeMs };
    } catch {
      return { size: -1, mtimeMs: -1 };
    }
  };
  const [have, want] = [stamp(target), stamp(source)];
  // Same size and not older than the package's copy: already there.
  if (have.size === want.size && have.mtimeMs >= want.mtimeMs) return;
  mkdirSync(path.dirname(target), { recursive: true });
  copyFileSync(source, target);
}
