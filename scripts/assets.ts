/**
 * Makes wrangler.toml's `[assets]` directory, build/assets/: the API reference
 * page's script (scripts/docs-assets.ts) and the browser pages under ui/
 * (scripts/ui-assets.ts). wrangler.toml's `[build]` runs this file before
 * wrangler dev, deploy and types; the Workers vitest pool, which reads
 * wrangler.toml without running `[build]`, calls buildAssets() from
 * vitest.config.ts.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ASSETS_DIR, ensureDocsAssets } from './docs-assets.ts';
import { buildUiAssets } from './ui-assets.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export function buildAssets(): void {
  ensureDocsAssets();
  buildUiAssets(ROOT, ASSETS_DIR);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  buildAssets();
}
