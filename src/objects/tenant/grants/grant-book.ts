/**
 * The grants part's tables (docs/STORAGE.md): one row per OAuth grant, from the partner's
 * consent on, holding its authorization code (until used) and its current refresh token,
 * each only as a SHA-256; and the refresh tokens it spent, so that a spent one presented
 * again is known for what it is (reuse), not taken for an unknown one.
 */
import type { Sql } from '../sql';

/** A grant as its row holds it. */
export interface GrantRow {
  /** The grant's token id, chosen at consent (the token exists once its code is used). */
  tokenId: string;
  clientId: string;
  clientName: string;
  redirectUri: string;
  scopes: string[];
  resource: string;
  grantedBy: string;
  createdAt: number;
  codeHash: string | null;
  codeChallenge: string | null;
  codeExpiresAt: number | null;
  codeUsedAt: number | null;
  refreshHash: string | null;
  refreshExpiresAt: number | null;
  endedAt: number | null;
  endedReason: string | null;
}

interface Row extends Record<string, string | number | null> {
  token_id: string;
  client_id: string;
  client_name: string;
  redirect_uri: string;
  scopes: string;
  resource: string;
  granted_by: string;
  created_at: number;
  code_hash: string | null;
  code_challenge: string | null;
  code_expires_at: number | null;
  code_used_at: number | null;
  refresh_hash: string | null;
  refresh_expires_at: number | null;
  ended_at: number | null;
  ended_reason: string | null;
}

const fromRow = (r: Row): GrantRow => ({
  tokenId: r.token_id,
  clientId: r.client_id,
  clientName: r.client_name,
  redirectUri: r.redirect_uri,
  scopes: JSON.parse(r.scopes) as string[],
  resource: r.resource,
  grantedBy: r.granted_by,
  createdAt: r.created_at,
  codeHash: r.code_hash,
  codeChallenge: r.code_challenge,
  codeExpiresAt: r.code_expires_at,
  codeUsedAt: r.code_used_at,
  refreshHash: r.refresh_hash,
  refreshExpiresAt: r.refresh_expires_at,
  endedAt: r.ended_at,
  endedReason: r.ended_reason,
});

/** How long an ended grant, and a spent refresh token, are kept (then swept). */
export const ENDED_GRANTS_KEPT_MS = 90 * 86_400_000;
/** A consent whose code was never used is forgotten this long after the code's end. */
const UNUSED_CONSENT_KEPT_MS = 3_600_000;

export class GrantBook {
  constructor(private readonly sql: Sql) {
    sql.exec(`
      CREATE TABLE IF NOT EXISTS oauth_grants (
        token_id TEXT PRIMARY KEY, client_id TEXT NOT NULL, client_name TEXT NOT NULL,
        redirect_uri TEXT NOT NULL, scopes TEXT NOT NULL, resource TEXT NOT NULL,
        granted_by TEXT NOT NULL, created_at INTEGER NOT NULL,
        code_hash TEXT, code_challenge TEXT, code_expires_at INTEGER, code_used_at INTEGER,
        refresh_hash TEXT, refresh_expires_at INTEGER, ended_at INTEGER, ended_reason TEXT);
      CREATE INDEX IF NOT EXISTS oauth_grants_by_code ON oauth_grants (code_hash);
      CREATE INDEX IF NOT EXISTS oauth_grants_by_refresh ON oauth_grants (refresh_hash);
      CREATE TABLE IF NOT EXISTS oauth_spent_refresh (
        hash TEXT PRIMARY KEY, token_id TEXT NOT NULL, spent_at INTEGER NOT NULL);
    `);
  }

  /** A consent: the grant and its code, not yet a token. */
  insert(
    g: Pick<
      GrantRow,
      | 'tokenId'
      | 'clientId'
      | 'clientName'
      | 'redirectUri'
      | 'scopes'
      | 'resource'
      | 'grantedBy'
      | 'createdAt'
      | 'codeHash'
      | 'codeChallenge'
      | 'codeExpiresAt'
    >,
  ): void {
    this.sql.exec(
      `INSERT INTO oauth_grants (token_id, client_id, client_name, redirect_uri, scopes,
         resource, granted_by, created_at, code_hash, code_challenge, code_expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      g.tokenId,
      g.clientId,
      g.clientName,
      g.redirectUri,
      JSON.stringify(g.scopes),
      g.resource,
      g.grantedBy,
      g.createdAt,
      g.codeHash,
      g.codeChallenge,
      g.codeExpiresAt,
    );
  }

  byToken(tokenId: string): GrantRow | null {
    return this.one('SELECT * FROM oauth_grants WHERE token_id = ?', tokenId);
  }

  byCode(hash: string): GrantRow | null {
    return this.one('SELECT * FROM oauth_grants WHERE code_hash = ?', hash);
  }

  byRefresh(hash: string): GrantRow | null {
    return this.one('SELECT * FROM oauth_grants WHERE refresh_hash = ?', hash);
  }

  /** The grant a spent refresh token was of, or null. */
  spentBy(hash: string): GrantRow | null {
    return this.one(
      `SELECT * FROM oauth_grants WHERE token_id =
         (SELECT token_id FROM oauth_spent_refresh WHERE hash = ?)`,
      hash,
    );
  }

  /** The code is used: the grant's first refresh token replaces it. */
  codeUsed(tokenId: string, now: number, refreshHash: string, refreshExpiresAt: number): void {
    this.sql.exec(
      `UPDATE oauth_grants SET code_used_at = ?, refresh_hash = ?, refresh_expires_at = ?
         WHERE token_id = ?`,
      now,
      refreshHash,
      refreshExpiresAt,
      tokenId,
    );
  }

  /** A refresh: the presented token is spent, a new one replaces it. */
  refreshed(g: GrantRow, now: number, refreshHash: string, refreshExpiresAt: number): void {
    if (g.refreshHash) {
      this.sql.exec(
        'INSERT OR IGNORE INTO oauth_spent_refresh (hash, token_id, spent_at) VALUES (?, ?, ?)',
        g.refreshHash,
        g.tokenId,
        now,
      );
    }
    this.sql.exec(
      'UPDATE oauth_grants SET refresh_hash = ?, refresh_expires_at = ? WHERE token_id = ?',
      refreshHash,
      refreshExpiresAt,
      g.tokenId,
    );
  }

  /** The grant ends (revoked, a code or refresh token reused, expired): nothing renews it. */
  end(tokenId: string, now: number, reason: string): void {
    this.sql.exec(
      `UPDATE oauth_grants SET ended_at = COALESCE(ended_at, ?),
         ended_reason = COALESCE(ended_reason, ?) WHERE token_id = ?`,
      now,
      reason,
      tokenId,
    );
  }

  /** The grants whose code was used (they have a token), newest first. */
  issued(): GrantRow[] {
    return this.sql
      .exec<Row>(
        'SELECT * FROM oauth_grants WHERE code_used_at IS NOT NULL ORDER BY created_at DESC',
      )
      .toArray()
      .map(fromRow);
  }

  /**
   * Consents whose code was never used, once it is long past its end; grants that ended
   * (or whose refresh token ended) ENDED_GRANTS_KEPT_MS ago, and spent refresh tokens as old.
   */
  sweep(now: number): void {
    this.sql.exec(
      'DELETE FROM oauth_grants WHERE code_used_at IS NULL AND code_expires_at < ?',
      now - UNUSED_CONSENT_KEPT_MS,
    );
    const ended = now - ENDED_GRANTS_KEPT_MS;
    this.sql.exec(
      `DELETE FROM oauth_grants WHERE COALESCE(ended_at, refresh_expires_at) < ?`,
      ended,
    );
    this.sql.exec('DELETE FROM oauth_spent_refresh WHERE spent_at < ?', ended);
  }

  private one(query: string, ...bindings: string[]): GrantRow | null {
    const row = this.sql.exec<Row>(query, ...bindings).toArray()[0];
    return row ? fromRow(row) : null;
  }
}
