/**
 * How the fleet's own Durable Objects (audit log, fleet board, config book, OAuth clients,
 * plan book) start: their SQLite tables are made where missing (`CREATE ... IF NOT EXISTS`),
 * then brought up to date by each of `upgrades`, in order (each checks before it changes,
 * so a second start changes nothing). Written as the object's field initializer:
 * `private readonly sql = openTables(this.ctx, SCHEMA)`.
 */
export function openTables(
  ctx: DurableObjectState,
  schema: string,
  ...upgrades: ((sql: SqlStorage) => void)[]
): SqlStorage {
  const sql = ctx.storage.sql;
  sql.exec(schema);
  for (const upgrade of upgrades) upgrade(sql);
  return sql;
}
