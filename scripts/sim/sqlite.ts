/**
 * The guard's Sql interface (src/objects/tenant/sql.ts) over node:sqlite, in memory:
 * the simulation runs the TenantGuard's own storage code, statements and all.
 */
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import type { Sql, SqlCursor, SqlValue } from '../../src/objects/tenant/sql';

export function memorySql(): Sql {
  const db = new DatabaseSync(':memory:');
  const statements = new Map<string, ReturnType<DatabaseSync['prepare']>>();
  return {
    exec<T extends Record<string, SqlValue>>(query: string, ...bindings: SqlValue[]): SqlCursor<T> {
      // Several statements at once (migrations) take no bindings and return nothing.
      if (bindings.length === 0 && query.trim().replace(/;\s*$/, '').includes(';')) {
        db.exec(query);
        return cursor<T>([], 0);
      }
      let stmt = statements.get(query);
      if (!stmt) {
        stmt = db.prepare(query);
        statements.set(query, stmt);
      }
      const args = bindings as SQLInputValue[];
      if (stmt.columns().length > 0) return cursor(stmt.all(...args) as T[], 0);
      return cursor<T>([], Number(stmt.run(...args).changes));
    },
  };
}

function cursor<T>(rows: T[], rowsWritten: number): SqlCursor<T> {
  return {
    toArray: () => rows,
    one: () => {
      if (rows.length !== 1) throw new Error(`expected one row, got ${rows.length}`);
      return rows[0] as T;
    },
    rowsWritten,
    [Symbol.iterator]: () => rows[Symbol.iterator](),
  };
}
