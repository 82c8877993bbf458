/**
 * AuditLog: one SQLite-backed Durable Object (named "global") that records
 * every operator action: when, what, which tenant and token. Entries carry
 * ids and non-secret fields only; callers never pass tokens or keys.
 */
import { DurableObject } from 'cloudflare:workers';
import type { AuditEntry, AuditPage } from '../../types/wire';
import { openTables } from '../tables';

/** Oldest entries beyond this many are dropped (docs/BOUNDS.md). */
export const AUDIT_MAX_ENTRIES = 100_000;

export type { AuditEntry };

/** What the audit log can be filtered by (all optional, combined with AND). */
export interface AuditFilter {
  tenantId?: string;
  actor?: string;
  /** An exact action, or a prefix ending in `.` (`tokens.` = every token action). */
  action?: string;
  /** ISO times, inclusive. */
  since?: string;
  until?: string;
}

/** Entries the gateway makes itself (alert deliveries) name no operator: their actor is `gateway`. */
export type NewAuditEntry = Omit<AuditEntry, 'id' | 'at' | 'actor' | 'ip' | 'colo'> &
  Partial<Pick<AuditEntry, 'actor' | 'ip' | 'colo'>>;

/** A stored entry: `detail` is kept as JSON text. */
type Row = Omit<AuditEntry, 'detail'> & { detail: string } & Record<string, SqlStorageValue>;

/** The one audit log object. */
export function auditLog(env: { AUDIT_LOG: DurableObjectNamespace<AuditLog> }) {
  return env.AUDIT_LOG.get(env.AUDIT_LOG.idFromName('global'));
}

/** The tables, made where missing at every start. */
const TABLES = `
  CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, action TEXT NOT NULL,
    tenant_id TEXT, token_id TEXT, request_id TEXT NOT NULL, detail TEXT NOT NULL);
  CREATE INDEX IF NOT EXISTS entries_by_tenant ON entries (tenant_id, id);
  CREATE TABLE IF NOT EXISTS episodes (key TEXT PRIMARY KEY, until INTEGER NOT NULL);
`;

/** Entries written before operators were told apart have no actor: they were all the admin token. */
function addOperatorColumns(sql: SqlStorage): void {
  const columns = sql.exec<{ name: string }>('PRAGMA table_info(entries)').toArray();
  if (!columns.some((c) => c.name === 'actor')) {
    sql.exec(`
      ALTER TABLE entries ADD COLUMN actor TEXT NOT NULL DEFAULT 'admin-token';
      ALTER TABLE entries ADD COLUMN ip TEXT;
      ALTER TABLE entries ADD COLUMN colo TEXT;
      CREATE INDEX IF NOT EXISTS entries_by_actor ON entries (actor, id);
    `);
  }
}

export class AuditLog extends DurableObject {
  private readonly sql = openTables(this.ctx, TABLES, addOperatorColumns);

  record(entry: NewAuditEntry): void {
    this.sql.exec(
      'INSERT INTO entries (at, action, tenant_id, token_id, request_id, actor, ip, colo, detail) ' +
        'VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      new Date().toISOString(),
      entry.action,
      entry.tenant_id,
      entry.token_id,
      entry.request_id,
      entry.actor ?? 'gateway',
      entry.ip ?? null,
      entry.colo ?? null,
      JSON.stringify(entry.detail),
    );
    this.sql.exec(
      'DELETE FROM entries WHERE id <= (SELECT MAX(id) FROM entries) - ?',
      AUDIT_MAX_ENTRIES,
    );
  }

  /**
   * Records `entry` once per episode: unless an episode named `key` (a throttled
   * network, say) still runs at `now`, this one starts, lasting until `until`.
   * Isolates that each see the episode begin record it once between them. True
   * when this call recorded it.
   */
  recordEpisode(key: string, now: number, until: number, entry: NewAuditEntry): boolean {
    this.sql.exec('DELETE FROM episodes WHERE until <= ?', now);
    const open = this.sql.exec('SELECT 1 FROM episodes WHERE key = ?', key).toArray();
    if (open.length > 0) return false;
    this.sql.exec('INSERT INTO episodes (key, until) VALUES (?, ?)', key, until);
    this.record(entry);
    return true;
  }

  /** Newest first, in the platform's paged wrapper shape. */
  list(pageNum: number, pageSize: number, filter: AuditFilter = {}): AuditPage {
    const clauses: string[] = [];
    const args: SqlStorageValue[] = [];
    const add = (clause: string, value: string | undefined) => {
      if (value === undefined) return;
      clauses.push(clause);
      args.push(value);
    };
    add('tenant_id = ?', filter.tenantId);
    add('actor = ?', filter.actor);
    if (filter.action?.endsWith('.'))
      add("action LIKE ? ESCAPE '\\'", `${escapeLike(filter.action)}%`);
    else add('action = ?', filter.action);
    add('at >= ?', filter.since);
    add('at <= ?', filter.until);
    const where = clauses.length ? `WHERE ${clauses.join(' AND ')}` : '';
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

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (ch) => `\\${ch}`);
}
