/**
 * Bundles the browser pages (the operator console, the partner portal) into
 * static assets: every `ui/<page>/main.tsx` becomes build/assets/<page>/app.js,
 * and the page's other files (index.html, *.css) are copied beside it. Hono's
 * JSX for the DOM (`hono/jsx/dom`) is the UI library; nothing is loaded from
 * outside the gateway's origin, so the pages run under `default-src 'self'`.
 * ui/_headers (CSP and other response headers) goes to the assets' root.
 * Shared code lives in ui/lib/ (a folder without main.tsx, so not a page).
 * esbuild is the bundler wrangler itself uses; a build takes well under a second.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { buildSync } from 'esbuild';

export function buildUiAssets(root: string, assetsDir: string): string[] {
  const uiDir = path.join(root, 'ui');
  if (!existsSync(uiDir)) return [];
  const pages = readdirSync(uiDir).filter((name) => existsSync(path.join(uiDir, name, 'main.tsx')));
  for (const page of pages) {
    const source = path.join(uiDir, page);
    const target = path.join(assetsDir, page);
    mkdirSync(target, { recursive: true });
    buildSync({
      entryPoints: [path.join(source, 'main.tsx')],
      outfile: path.join(target, 'app.js'),
      bundle: true,
      format: 'esm',
      minify: true,
      target: 'es2022',
      jsx: 'automatic',
      jsxImportSource: 'hono/jsx/dom',
      legalComments: 'none',
      logLevel: 'warning',
    });
    for (const file of readdirSync(source)) {
      const from = path.join(source, file);
      if (statSync(from).isFile() && /\.(html|css|svg|txt)$/.test(file)) {
        copyFileSync(from, path.join(target, file));
      }
    }
  }
  // Response headers for the pages (CSP and the like): Workers static assets
  // read them from `_headers` at the assets' root.
  const headers = path.join(uiDir, '_headers');
  if (existsSync(headers)) copyFileSync(headers, path.join(assetsDir, '_headers'));
  // The pages' icon (/favicon.svg, which each page links to), so no page asks for one in vain.
  const icon = path.join(uiDir, 'favicon.svg');
  if (existsSync(icon)) copyFileSync(icon, path.join(assetsDir, 'favicon.svg'));
  return pages;
}
