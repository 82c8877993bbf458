/**
 * wrangler.toml's `[build]`: wrangler dev, deploy and types make the
 * `[assets]` directory themselves, so they work right after `npm ci` (.ci/run
 * proves it in a fresh clone with `npx wrangler deploy --dry-run --env
 * production`). Here: every config runs the same command, environments
 * inherit it, and the command makes the asset from nothing, offline.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, statSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { unstable_readConfig } from 'wrangler';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const COMMAND = 'npx tsx scripts/assets.ts';
const tmp = mkdtempSync(path.join(os.tmpdir(), 'build-assets-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('[build]', () => {
  it('wrangler.toml and test/deploy/wrangler.toml run it, [env.production] included', () => {
    for (const config of ['wrangler.toml', 'test/deploy/wrangler.toml']) {
      for (const env of [undefined, 'production']) {
        const c = unstable_readConfig({ config: path.join(ROOT, config), env });
        expect(c.build.command, `${config} ${env ?? '(top level)'}`).toBe(COMMAND);
      }
    }
  });

  it('makes build/assets/docs/scalar.js in a tree that has none', async () => {
    // The repository's script and packages, in a directory without build/.
    for (const script of ['assets.ts', 'docs-assets.ts', 'ui-assets.ts']) {
      cpSync(path.join(ROOT, 'scripts', script), path.join(tmp, 'scripts', script));
    }
    cpSync(path.join(ROOT, 'ui'), path.join(tmp, 'ui'), { recursive: true });
    // The one module of src/ the pages run (the words for a duration; it imports nothing).
    cpSync(path.join(ROOT, 'src', 'duration.ts'), path.join(tmp, 'src', 'duration.ts'));
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(tmp, 'node_modules'));
    const target = path.join(tmp, 'build', 'assets', 'docs', 'scalar.js');
    expect(existsSync(target)).toBe(false);
    await new Promise<void>((resolve, reject) =>
      execFile('sh', ['-c', COMMAND], { cwd: tmp, timeout: 60_000 }, (err) =>
        err ? reject(err) : resolve(),
      ),
    );
    const source = createRequire(import.meta.url).resolve(
      '@scalar/api-reference/browser/standalone.js',
    );
    expect(statSync(target).size).toBe(statSync(source).size);
  });
});
