/**
 * A tenant's tokens as its TenantGuard decides them (docs/SECURITY.md, "Token
 * changes are decided in one place"). Issue, rotation, expiry and revocation
 * are decided here, one call at a time (a Durable Object runs one call at a
 * time and these SQL calls are synchronous), so a revocation and a rotation
 * can never both act on what the other has not seen. Each decision bumps the
 * token's `version`; the shell (tenant-guard.ts) then writes the decided record
 * to KV, where authentication reads it, and marks the version written. KV is
 * only ever written from these rows, never from an earlier read.
 *
 * Rotation chains: each token records its family (the first token of its
 * line), its ancestor, and once rotated, its successor, when and by whom. A
 * family rotates one step at a time (docs/OPERATING.md, "Rotation").
 */

import { DEFAULT_USAGE_RETENTION_DAYS } from '../../../metering/usage';
import type { TokenEntry } from '../../../tenants/token-store';
import type { TokenRecord } from '../../../types/tenants';
import type { ListedToken } from '../../../types/wire';
import type { NewAuditEntry } from '../../audit/audit-log';
import type { Sql } from '../sql';

/** What a new token needs from the isolate that made its secret: ids and display parts only. */
export interface MintedToken {
  id: string;
  hash: string;
  prefix: string;
  last4: string;
  /** The key id that tagged it (tenants/token.ts). */
  tag_kid: string;
}

/** Who asked for a change, for the audit entries the guard writes in decision order. */
export interface AuditContext {
  request_id: string;
  actor: string;
  ip: string | null;
  colo: string | null;
}

/** A token's row: its record as KV holds it, and its place in its family. */
export interface TokenRow extends TokenEntry {
  familyId: string;
  ancestorId: string | null;
  successorId: string | null;
  rotatedAt: number | null;
  rotatedBy: string | null;
}

export type { ListedToken };

/** A decided record KV does not hold yet. */
export interface PendingWrite extends TokenEntry {
  version: number;
  /** The tenant was deleted: every record of the token goes. */
  removed: boolean;
}

export type RotateOutcome =
  | { kind: 'rotated'; old: TokenEntry; successor: TokenEntry }
  | { kind: 'not_found' | 'revoked' | 'expired' }
  /** An OAuth grant's token: it is renewed by its grant's refresh, never rotated. */
  | { kind: 'grant' }
  /** The token already has a successor that works: a family rotates one step at a time. */
  | { kind: 'successor_pending'; successorId: string }
  /** The token's own ancestor still works (its overlap runs): the same rule, one step back. */
  | { kind: 'ancestor_working'; ancestorId: string; until: string | null };

interface Row extends Record<string, string | number | null> {
  token_id: string;
  hash: string;
  record: string;
  family_id: string;
  ancestor_id: string | null;
  successor_id: string | null;
  rotated_at: number | null;
  rotated_by: string | null;
  removed: number;
  version: number;
  kv_version: number;
}

export function migrateTokens(sql: Sql): void {
  sql.exec(`
    CREATE TABLE IF NOT EXISTS tokens (
      token_id TEXT PRIMARY KEY, hash TEXT NOT NULL, record TEXT NOT NULL,
      family_id TEXT NOT NULL, ancestor_id TEXT, successor_id TEXT,
      rotated_at INTEGER, rotated_by TEXT,
      revoked_at INTEGER, expires_at INTEGER,
      removed INTEGER NOT NULL DEFAULT 0,
      version INTEGER NOT NULL, kv_version INTEGER NOT NULL DEFAULT 0);
    CREATE INDEX IF NOT EXISTS tokens_by_ancestor ON tokens (ancestor_id);
    CREATE TABLE IF NOT EXISTS token_audit_outbox (
      seq INTEGER PRIMARY KEY AUTOINCREMENT, entry TEXT NOT NULL);
  `);
}

const fromRow = (r: Row): TokenRow => ({
  hash: r.hash,
  record: JSON.parse(r.record) as TokenRecord,
  familyId: r.family_id,
  ancestorId: r.ancestor_id,
  successorId: r.successor_id,
  rotatedAt: r.rotated_at,
  rotatedBy: r.rotated_by,
});

/**
 * How long a token that ended (revoked, expired, or rotated past its overlap) stays
 * listed, as such (docs/OPERATING.md, "Rotation"): as long as the usage history
 * keeps by default (USAGE_RETENTION_DAYS), so its family and its usage keep a name.
 */
export const ENDED_TOKENS_LISTED_DAYS = DEFAULT_USAGE_RETENTION_DAYS;

/** An ISO time as ms, for the columns that sweeping and listing compare. */
const msOf = (iso: string | null | undefined) => (iso ? Date.parse(iso) : null);

/** Whether a token is accepted at `now` by its record: neither revoked nor past its expiry. */
export function works(record: TokenRecord, now: number): boolean {
  return !record.revoked_at && (record.expires_at === null || Date.parse(record.expires_at) > now);
}

export class TokenRegistry {
  constructor(private readonly sql: Sql) {}

  get(tokenId: string): TokenRow | null {
    const row = this.sql
      .exec<Row>('SELECT * FROM tokens WHERE token_id = ? AND removed = 0', tokenId)
      .toArray()[0];
    return row ? fromRow(row) : null;
  }

  /** Whether the guard holds a row of this token at all (removed and ended ones included). */
  exists(tokenId: string): boolean {
    return this.sql.exec('SELECT 1 FROM tokens WHERE token_id = ?', tokenId).toArray().length > 0;
  }

  /** A new token (issue, rotation): KV gets it before the answer. */
  insert(row: TokenRow): void {
    const { record } = row;
    this.sql.exec(
      `INSERT INTO tokens (token_id, hash, record, family_id, ancestor_id, successor_id,
         rotated_at, rotated_by, revoked_at, expires_at, version)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)`,
      record.id,
      row.hash,
      JSON.stringify(record),
      row.familyId,
      row.ancestorId,
      row.successorId,
      row.rotatedAt,
      row.rotatedBy,
      msOf(record.revoked_at),
      msOf(record.expires_at),
    );
  }

  /** Replaces a token's row with its newly decided state, to be written to KV. */
  update(row: TokenRow): void {
    const { record } = row;
    this.sql.exec(
      `UPDATE tokens SET record = ?, successor_id = ?, rotated_at = ?, rotated_by = ?,
         revoked_at = ?, expires_at = ?, version = version + 1
       WHERE token_id = ?`,
      JSON.stringify(record),
      row.successorId,
      row.rotatedAt,
      row.rotatedBy,
      msOf(record.revoked_at),
      msOf(record.expires_at),
      record.id,
    );
  }

  /** A token's new secret (an OAuth refresh): its row now holds the new hash and record. */
  rekey(tokenId: string, hash: string, record: TokenRecord): void {
    this.sql.exec(
      `UPDATE tokens SET hash = ?, record = ?, revoked_at = ?, expires_at = ?,
         version = version + 1 WHERE token_id = ?`,
      hash,
      JSON.stringify(record),
      msOf(record.revoked_at),
      msOf(record.expires_at),
      tokenId,
    );
  }

  /** The tokens rotated from this one, and from those, in rotation order. */
  descendants(tokenId: string): TokenRow[] {
    const out: TokenRow[] = [];
    const queue = [tokenId];
    for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
      const children = this.sql
        .exec<Row>('SELECT * FROM tokens WHERE ancestor_id = ? AND removed = 0 ORDER BY rowid', id)
        .toArray()
        .map(fromRow);
      out.push(...children);
      queue.push(...children.map((c) => c.record.id));
    }
    return out;
  }

  /**
   * The tenant's tokens as the operator sees them, oldest first: working ones, and
   * those that ended (revoked, expired, or rotated and past their overlap) within the
   * last ENDED_TOKENS_LISTED_DAYS, so a family and the usage by token keep their names.
   */
  list(now: number): TokenRow[] {
    const since = now - ENDED_TOKENS_LISTED_DAYS * 86_400_000;
    return this.sql
      .exec<Row>(
        `SELECT * FROM tokens WHERE removed = 0
           AND (revoked_at IS NULL OR revoked_at > ?)
           AND (expires_at IS NULL OR expires_at > ?) ORDER BY rowid`,
        since,
        since,
      )
      .toArray()
      .map(fromRow);
  }

  /** Every token, revoked or not (tenant deletion, counting key ids). */
  all(): TokenRow[] {
    return this.sql
      .exec<Row>('SELECT * FROM tokens WHERE removed = 0 ORDER BY rowid')
      .toArray()
      .map(fromRow);
  }

  /** The tenant is being deleted: every token's records leave KV. */
  removeAll(): void {
    this.sql.exec('UPDATE tokens SET removed = 1, version = version + 1 WHERE removed = 0');
  }

  /**
   * Tokens KV knew before the guard decided them (stored before this table
   * existed): taken as they are, except where the guard knows better (a
   * revocation or an overlap's end it enforced), which is then written back.
   * A token the guard already holds is left alone: its row is the newer truth.
   */
  adopt(entries: TokenEntry[], familyOf: (id: string) => string, tokenEnd: EndOf): void {
    for (const { hash, record } of entries) {
      const fixed = { ...record };
      const end = tokenEnd(record.id);
      if (end?.reason === 'revoked' && !fixed.revoked_at) {
        fixed.revoked_at = new Date(end.at).toISOString();
      }
      if (end?.reason === 'expired') {
        const at = Math.min(end.at, fixed.expires_at ? Date.parse(fixed.expires_at) : Infinity);
        fixed.expires_at = new Date(at).toISOString();
      }
      const changed = JSON.stringify(fixed) !== JSON.stringify(record);
      this.sql.exec(
        `INSERT OR IGNORE INTO tokens (token_id, hash, record, family_id, revoked_at, expires_at,
           version, kv_version)
         VALUES (?, ?, ?, ?, ?, ?, ?, 1)`,
        record.id,
        hash,
        JSON.stringify(fixed),
        familyOf(record.id),
        msOf(fixed.revoked_at),
        msOf(fixed.expires_at),
        changed ? 2 : 1,
      );
    }
  }

  /** Decided records KV does not hold yet, oldest decision first. */
  pendingWrites(): PendingWrite[] {
    return this.sql
      .exec<Row>('SELECT * FROM tokens WHERE version > kv_version ORDER BY rowid')
      .toArray()
      .map((r) => ({
        hash: r.hash,
        record: JSON.parse(r.record) as TokenRecord,
        version: r.version,
        removed: r.removed === 1,
      }));
  }

  /** KV holds `version` of the token now (a later decision keeps it pending). */
  written(tokenId: string, version: number): void {
    this.sql.exec(
      'UPDATE tokens SET kv_version = ? WHERE token_id = ? AND kv_version < ?',
      version,
      tokenId,
      version,
    );
  }

  /** An audit entry for a decision, sent to the AuditLog in decision order. */
  queueAudit(entry: NewAuditEntry): void {
    this.sql.exec('INSERT INTO token_audit_outbox (entry) VALUES (?)', JSON.stringify(entry));
  }

  pendingAudits(): { seq: number; entry: NewAuditEntry }[] {
    return this.sql
      .exec<{ seq: number; entry: string }>('SELECT * FROM token_audit_outbox ORDER BY seq')
      .toArray()
      .map((r) => ({ seq: r.seq, entry: JSON.parse(r.entry) as NewAuditEntry }));
  }

  audited(seq: number): void {
    this.sql.exec('DELETE FROM token_audit_outbox WHERE seq = ?', seq);
  }

  /** Whether KV or the audit log still lack a decision. */
  hasPending(): boolean {
    const writes = this.sql.exec<{ n: number }>(
      'SELECT COUNT(*) AS n FROM tokens WHERE version > kv_version',
    );
    const audits = this.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM token_audit_outbox');
    return writes.one().n + audits.one().n > 0;
  }

  /**
   * Removed rows, and rows no longer listed: KV no longer holds their record either
   * (it keeps an ended one for less, REVOKED_RECORD_KEPT_S or EXPIRED_RECORD_KEPT_S).
   */
  sweep(now: number): void {
    const ended = now - ENDED_TOKENS_LISTED_DAYS * 86_400_000;
    this.sql.exec(
      `DELETE FROM tokens WHERE version = kv_version AND (removed = 1
         OR revoked_at <= ? OR expires_at <= ?)`,
      ended,
      ended,
    );
  }
}

export type EndOf = (tokenId: string) => { at: number; reason: 'revoked' | 'expired' } | null;

/** What the operator API shows of a row. */
export function listed(row: TokenRow): ListedToken {
  return {
    ...row.record,
    family_id: row.familyId,
    ancestor_id: row.ancestorId,
    successor_id: row.successorId,
    rotated_at: row.rotatedAt === null ? null : new Date(row.rotatedAt).toISOString(),
    rotated_by: row.rotatedBy,
  };
}
