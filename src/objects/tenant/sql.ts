/**
 * The part of a Durable Object's SQL storage (`ctx.storage.sql`) the guard's
 * code uses. Narrow on purpose: the fleet simulation (scripts/sim/) runs the
 * same code on node:sqlite behind this interface, outside workerd.
 */
export type SqlValue = ArrayBuffer | string | number | null;

export interface SqlCursor<T> extends Iterable<T> {
  toArray(): T[];
  one(): T;
  readonly rowsWritten: number;
}

export interface Sql {
  exec<T extends Record<string, SqlValue>>(query: string, ...bindings: SqlValue[]): SqlCursor<T>;
}
