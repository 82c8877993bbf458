/**
 * The layer rules of src/ (scripts/check-layers.ts, docs/ARCHITECTURE.md):
 * src/ keeps them, the check catches each kind of break in a made-up tree,
 * the document draws the layers the check enforces, and Biome looks for
 * import circles with type imports counted.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { checkLayers, picture, tablesPicture } from '../../scripts/check-layers';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const tmp = mkdtempSync(path.join(os.tmpdir(), 'layers-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmp, 'src-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

describe('layers', () => {
  it('src/ keeps them', () => {
    expect(checkLayers(path.join(ROOT, 'src'))).toEqual([]);
  });

  it('finds an upward import, type-only ones included', () => {
    const dir = tree({
      'types/context.ts': 'export interface A { a: number }\n',
      'errors.ts': "import type { HonoEnv } from './app';\nexport type E = HonoEnv;\n",
      'app.ts': "import type { A } from './types/context';\nexport type HonoEnv = A;\n",
    });
    expect(checkLayers(dir)).toEqual([
      'errors.ts: imports app.ts, a higher layer (leaves imports entry)',
    ]);
  });

  it('keeps runtime code out of types/, and every file in a layer', () => {
    const dir = tree({
      'types/context.ts': "import { x } from '../log';\nexport const y = x;\n",
      'log.ts': 'export const x = 1;\n',
      'stray.ts': 'export {};\n',
      'objects/tenant/tenant-guard.ts': "import '../../../emulator/store';\n",
    });
    expect(checkLayers(dir)).toEqual([
      'objects/tenant/tenant-guard.ts: imports ../emulator/store, outside src/',
      'stray.ts: in no layer (add it to LAYERS in scripts/check-layers.ts)',
      'types/context.ts: imports log.ts, a higher layer (types imports leaves)',
      'types/context.ts:1: types/ holds type declarations and type imports only',
      'types/context.ts:2: types/ holds type declarations and type imports only',
    ]);
  });

  it("keeps each table to its owner's folder, and each part to the others' types", () => {
    const dir = tree({
      'objects/tenant/tokens/tokens-part.ts':
        "export class TokensPart {}\nconst t = 'CREATE TABLE IF NOT EXISTS tokens (id TEXT)';\n",
      'objects/tenant/alerts/alerts-part.ts': [
        "import type { TokensPart } from '../tokens/tokens-part';",
        'export type T = TokensPart;',
        "const q = 'SELECT * FROM tokens WHERE x = 1';",
        "const r = 'SELECT * FROM alert_log';",
        "const s = 'INSERT INTO made_up (a) VALUES (1)';",
        '',
      ].join('\n'),
      'objects/tenant/limits/limits-part.ts': [
        "import { TokensPart } from '../tokens/tokens-part';",
        "import type { SettingsView } from '../settings';",
        'export const p = TokensPart;',
        "export type V = SettingsView<'limits' | 'retention_days'>;",
        '',
      ].join('\n'),
    });
    expect(checkLayers(dir)).toEqual([
      'objects/tenant/alerts/alerts-part.ts: touches tokens, a table of TenantGuard, tokens (objects/tenant/tokens/)',
      'objects/tenant/alerts/alerts-part.ts: touches made_up, a table no owner lists (add it to TABLE_OWNERS)',
      "objects/tenant/limits/limits-part.ts: takes the setting retention_days, not its part's (TABLE_OWNERS)",
      "objects/tenant/limits/limits-part.ts: imports objects/tenant/tokens/tokens-part.ts, another part's code (take it as a type)",
      'objects/tenant/limits/: lists slots, which no file creates',
      'objects/tenant/limits/: lists stats, which no file creates',
      'objects/tenant/limits/: lists lease_holders, which no file creates',
      'objects/tenant/tokens/: lists token_audit_outbox, which no file creates',
      'objects/tenant/tokens/: lists token_states, which no file creates',
      'objects/tenant/tokens/: lists token_limits, which no file creates',
      'objects/tenant/tokens/: lists token_meters, which no file creates',
      'objects/tenant/alerts/: lists alert_config, which no file creates',
      'objects/tenant/alerts/: lists alerts_sent, which no file creates',
      'objects/tenant/alerts/: lists alert_outbox, which no file creates',
      'objects/tenant/alerts/: lists alert_log, which no file creates',
    ]);
  });

  it('docs/STORAGE.md shows who may touch which table, as the check holds it', () => {
    const doc = readFileSync(path.join(ROOT, 'docs', 'STORAGE.md'), 'utf8');
    expect(doc).toContain(tablesPicture());
  });

  it('docs/ARCHITECTURE.md draws the layers the check enforces', () => {
    const doc = readFileSync(path.join(ROOT, 'docs', 'ARCHITECTURE.md'), 'utf8');
    expect(doc).toContain(`\`\`\`\n${picture()}\n\`\`\``);
  });

  it('Biome finds import circles, type imports counted', () => {
    const biome = JSON.parse(readFileSync(path.join(ROOT, 'biome.json'), 'utf8'));
    expect(biome.linter.rules.suspicious.noImportCycles).toEqual({
      level: 'error',
      options: { ignoreTypes: false },
    });
  });
});
