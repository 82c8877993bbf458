/**
 * AuditLog: one SQLite-backed Durable Object (named "global") that records
 * every operator action: when, what, which tenant and token. Entries carry
 * ids and non-secret fields only; callers never pass tokens or keys.
 */
import { DurableObject } from 'cloudflare:workers';

/** Oldest entries beyond this many are dropped (docs/BOUNDS.md). */
export const AUDIT_MAX_ENTRIES = 100_000;

export interface AuditEntry {
  id: number;
  at: string;
  action: string;
  tenant_id: string | null;
  token_id: string | null;
  request_id: string;
  detail: Record<string, unknown>;
}

export type NewAuditEntry = Omit<AuditEntry, 'id' | 'at'>;

/** A stored entry: `detail` is kept as JSON text. */
type Row = Omit<AuditEntry, 'detail'> & { detail: string } & Record<string, SqlStorageValue>;

/** The one audit log object. */
export function auditLog(env: { AUDIT_LOG: DurableObjectNamespace<AuditLog> }) {
  return env.AUDIT_LOG.get(env.AUDIT_LOG.idFromName('global'));
}

export class AuditLog extends DurableObject {
  private readonly sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.sql.exec(`
      CREATE TABLE IF NOT EXISTS entries (
        id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, action TEXT NOT NULL,
        tenant_id TEXT, token_id TEXT, request_id TEXT NOT NULL, detail TEXT NOT NULL);
      CREATE INDEX IF NOT EXISTS entries_by_tenant ON entries (tenant_id, id);
    `);
  }

  record(entry: NewAuditEntry): void {
    this.sql.exec(
      'INSERT INTO entries (at, action, tenant_id, token_id, request_id, detail) ' +
        'VALUES (?, ?, ?, ?, ?, ?)',
      new Date().toISOString(),
      entry.action,
      entry.tenant_id,
      entry.token_id,
      entry.request_id,
      JSON.stringify(entry.detail),
    );
    this.sql.exec(
      'DELETE FROM entries WHERE id <= (SELECT MAX(id) FROM entries) - ?',
      AUDIT_MAX_ENTRIES,
    );
  }

  /** Newest first, in the platform's paged wrapper shape. */
  list(pageNum: number, pageSize: number, tenantId?: string) {
    const where = tenantId ? 'WHERE tenant_id = ?' : '';
    const args = tenantId ? [tenantId] : [];
    const total = this.sql
      .exec<{ n: number }>(`SELECT COUNT(*) AS n FROM entries ${where}`, ...args)
      .one().n;
    const rows = this.sql
      .exec<Row>(
        `SELECT * FROM entries ${where} ORDER BY id DESC LIMIT ? OFFSET ?`,
        ...args,
        pageSize,
        (pageNum - 1) * pageSize,
      )
      .toArray();
    return {
      page_num: pageNum,
      page_size: pageSize,
      total,
      total_page: Math.ceil(total / pageSize),
      data: rows.map(
        (r): AuditEntry => ({ ...r, detail: JSON.parse(r.detail) as Record<string, unknown> }),
      ),
    };
  }
}
