/**
 * The tenant's record as its TenantGuard decided it, in the guard's SQLite
 * (one row, docs/STORAGE.md): the source of truth for changes of the record
 * (tenant-record.ts). KV is written from it; KV is read only to adopt a record
 * the guard has none of yet.
 */
import type { StoredTenant } from '../../../types/tenants';
import type { Sql } from '../sql';

export interface KeptRecord {
  /** The record as decided; null: the tenant was deleted (a tombstone, kept for good). */
  record: StoredTenant | null;
  /**
   * Present while KV may still hold this record rather than `record`: a change decided
   * and not yet all written (the record, its index entries, what the guard holds beside).
   */
  kvHolds?: StoredTenant;
}

export class KeptRecordRow {
  constructor(private readonly sql: Sql) {
    sql.exec(`CREATE TABLE IF NOT EXISTS tenant_record (
      id INTEGER PRIMARY KEY CHECK (id = 1), record TEXT, kv_holds TEXT)`);
  }

  /** Undefined when the guard has decided nothing about its record yet. */
  read(): KeptRecord | undefined {
    const row = this.sql
      .exec<{ record: string | null; kv_holds: string | null }>(
        'SELECT record, kv_holds FROM tenant_record WHERE id = 1',
      )
      .toArray()[0];
    if (!row) return undefined;
    const kept: KeptRecord = {
      record: row.record ? (JSON.parse(row.record) as StoredTenant) : null,
    };
    if (row.kv_holds) kept.kvHolds = JSON.parse(row.kv_holds) as StoredTenant;
    return kept;
  }

  keep(kept: KeptRecord): void {
    this.sql.exec(
      'INSERT OR REPLACE INTO tenant_record (id, record, kv_holds) VALUES (1, ?, ?)',
      kept.record && JSON.stringify(kept.record),
      kept.kvHolds ? JSON.stringify(kept.kvHolds) : null,
    );
  }
}
