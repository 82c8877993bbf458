/**
 * The `settings` table of a tenant's TenantGuard: small named values, each owned
 * by one part (docs/STORAGE.md), read once per object life and then kept in memory
 * (the object is their only writer, so the copy cannot go stale). A part is handed
 * the view of the names it owns.
 */
import type { Sql } from './sql';

/** Rows of the `settings` table. */
export type SettingName =
  | 'limits'
  | 'cache_version'
  | 'disabled'
  | 'retention_days'
  | 'tokens_adopted'
  | 'plan'
  | 'partner_access';

/** The settings a part owns: it reads and writes those only. */
export interface SettingsView<N extends SettingName> {
  get(name: N): string | null;
  put(name: N, value: string | null): void;
}

export class GuardSettings implements SettingsView<SettingName> {
  private readonly values = new Map<SettingName, string | null>();

  constructor(private readonly sql: Sql) {
    sql.exec('CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value TEXT NOT NULL)');
  }

  get(name: SettingName): string | null {
    if (!this.values.has(name)) {
      const row = this.sql
        .exec<{ value: string }>('SELECT value FROM settings WHERE name = ?', name)
        .toArray()[0];
      this.values.set(name, row?.value ?? null);
    }
    return this.values.get(name) ?? null;
  }

  put(name: SettingName, value: string | null): void {
    if (value === null) this.sql.exec('DELETE FROM settings WHERE name = ?', name);
    else this.sql.exec('INSERT OR REPLACE INTO settings (name, value) VALUES (?, ?)', name, value);
    this.values.delete(name);
  }
}
