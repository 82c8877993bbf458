/**
 * The toolchain `npm ci` installs: one workerd for everything that runs the
 * gateway (wrangler, miniflare, the vitest plugin), and a lock file that
 * installs it on every platform the README promises, not only on the
 * machine that last wrote package-lock.json.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PLATFORMS = ['darwin-64', 'darwin-arm64', 'linux-64', 'linux-arm64', 'windows-64'];

/** Every `workerd/package.json` under node_modules, nested node_modules included. */
function installedWorkerds(
  dir: string,
  found: { file: string; version: string }[] = [],
  root = ROOT,
): { file: string; version: string }[] {
  if (!existsSync(dir)) return found;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const packages = entry.name.startsWith('@')
      ? readdirSync(path.join(dir, entry.name), { withFileTypes: true })
          .filter((e) => e.isDirectory())
          .map((e) => path.join(dir, entry.name, e.name))
      : [path.join(dir, entry.name)];
    for (const pkg of packages) {
      const manifest = path.join(pkg, 'package.json');
      if (path.basename(pkg) === 'workerd' && existsSync(manifest)) {
        const { version } = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string };
        found.push({ file: path.relative(root, manifest), version });
      }
      installedWorkerds(path.join(pkg, 'node_modules'), found, root);
    }
  }
  return found;
}

const lock = JSON.parse(readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string; optionalDependencies?: Record<string, string> }>;
};

describe('toolchain', () => {
  const installed = installedWorkerds(path.join(ROOT, 'node_modules'));
  const version = installed[0]?.version;

  it('has exactly one workerd version installed', () => {
    expect(installed.length).toBeGreaterThan(0);
    const versions = [...new Set(installed.map((w) => w.version))];
    expect(versions, JSON.stringify(installed, null, 2)).toHaveLength(1);
  });

  it('locks that workerd, and its binary for every platform, at that version', () => {
    const lockedWorkerds = Object.entries(lock.packages).filter(
      ([key]) => key === 'node_modules/workerd' || key.endsWith('/node_modules/workerd'),
    );
    expect(lockedWorkerds.length).toBeGreaterThan(0);
    for (const [key, entry] of lockedWorkerds) expect(entry.version, key).toBe(version);
    for (const platform of PLATFORMS) {
      const key = `node_modules/@cloudflare/workerd-${platform}`;
      expect(lock.packages[key]?.version, `${key} in package-lock.json`).toBe(version);
    }
    // Nor any other binary workerd asks for.
    const wanted = lock.packages['node_modules/workerd']?.optionalDependencies ?? {};
    for (const name of Object.keys(wanted)) {
      expect(lock.packages[`node_modules/${name}`]?.version, `${name} in package-lock.json`).toBe(
        version,
      );
    }
  });
});

describe('the workerd walk', () => {
  it('finds nested and scoped copies, so a second version fails the test above', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'toolchain-test-'));
    try {
      const put = (rel: string, version: string) => {
        mkdirSync(path.join(dir, rel), { recursive: true });
        writeFileSync(
          path.join(dir, rel, 'package.json'),
          JSON.stringify({ name: 'workerd', version }),
        );
      };
      put('node_modules/workerd', '1.1.1');
      put('node_modules/miniflare/node_modules/workerd', '2.2.2');
      put('node_modules/@cloudflare/vitest-plugin/node_modules/workerd', '1.1.1');
      const found = installedWorkerds(path.join(dir, 'node_modules'), [], dir);
      expect(found.map((w) => `${w.file} ${w.version}`).sort()).toEqual([
        'node_modules/@cloudflare/vitest-plugin/node_modules/workerd/package.json 1.1.1',
        'node_modules/miniflare/node_modules/workerd/package.json 2.2.2',
        'node_modules/workerd/package.json 1.1.1',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
