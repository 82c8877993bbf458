/**
 * What admission reads of a tenant's tokens, decided by the tokens part
 * (token-changes.ts) and read on every lease call (the limits part) and idempotency
 * claim: when a token stops being accepted and why (`token_states`), its own limits
 * (`token_limits`), and the first token of its rotation line, whose meters it counts
 * against (`token_meters`). Read once per object life and then kept in memory: the
 * object is the only writer, so the copies cannot go stale.
 */
import type { BrokerPush } from '../../../metering/lease-protocol';
import { type TokenLimits, tokenLimitsSchema } from '../../../metering/policy';
import type { Sql } from '../sql';

/** When a token stops being accepted, and why; null: it has no end recorded. */
export type TokenState = { at: number; reason: 'revoked' | 'expired' } | null;

/** What the other parts read. */
export type TokenStandingReader = Pick<TokenStanding, 'endOf' | 'limitsOf' | 'lineOf'>;

export class TokenStanding {
  private readonly ends = new Map<string, TokenState>();
  private readonly limits = new Map<string, TokenLimits | null>();
  private readonly lines = new Map<string, string>();

  constructor(private readonly sql: Sql) {
    sql.exec(`
      CREATE TABLE IF NOT EXISTS token_states (
        token_id TEXT PRIMARY KEY, not_after INTEGER NOT NULL, reason TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS token_limits (token_id TEXT PRIMARY KEY, limits TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS token_meters (token_id TEXT PRIMARY KEY, meters_of TEXT NOT NULL);
    `);
  }

  /** When the token stops being accepted, and why; null: no end recorded. */
  endOf(tokenId: string): TokenState {
    let state = this.ends.get(tokenId);
    if (state === undefined) {
      const row = this.sql
        .exec<{ not_after: number; reason: string }>(
          'SELECT not_after, reason FROM token_states WHERE token_id = ?',
          tokenId,
        )
        .toArray()[0];
      state = row
        ? { at: row.not_after, reason: row.reason === 'revoked' ? 'revoked' : 'expired' }
        : null;
      this.ends.set(tokenId, state);
    }
    return state;
  }

  /** What the regional brokers are told of the token's end (a reset when it has none). */
  pushOf(tokenId: string): BrokerPush {
    const end = this.endOf(tokenId);
    return end ? { kind: 'token', tokenId, end } : { kind: 'reset' };
  }

  /** From `now` on the token is refused, whatever else it had. */
  revoke(tokenId: string, now: number): void {
    this.sql.exec(
      "INSERT OR REPLACE INTO token_states (token_id, not_after, reason) VALUES (?, ?, 'revoked')",
      tokenId,
      now,
    );
    this.ends.delete(tokenId);
  }

  /** Refused from `at` on (a rotation's overlap end); revocation wins: the earlier end stays. */
  expireAt(tokenId: string, at: number): void {
    this.sql.exec(
      `INSERT INTO token_states (token_id, not_after, reason) VALUES (?, ?, 'expired')
       ON CONFLICT(token_id) DO UPDATE SET not_after = MIN(not_after, excluded.not_after)`,
      tokenId,
      at,
    );
    this.ends.delete(tokenId);
  }

  /** The token's own limits, or null. */
  limitsOf(tokenId: string): TokenLimits | null {
    let limits = this.limits.get(tokenId);
    if (limits === undefined) {
      const row = this.sql
        .exec<{ limits: string }>('SELECT limits FROM token_limits WHERE token_id = ?', tokenId)
        .toArray()[0];
      limits = row ? tokenLimitsSchema.parse(JSON.parse(row.limits)) : null;
      this.limits.set(tokenId, limits);
    }
    return limits;
  }

  putLimits(tokenId: string, limits: TokenLimits | null): void {
    if (limits === null) {
      this.sql.exec('DELETE FROM token_limits WHERE token_id = ?', tokenId);
    } else {
      this.sql.exec(
        'INSERT OR REPLACE INTO token_limits (token_id, limits) VALUES (?, ?)',
        tokenId,
        JSON.stringify(tokenLimitsSchema.parse(limits)),
      );
    }
    this.limits.delete(tokenId);
  }

  /**
   * The token whose own meters a token counts against: itself, or, after a
   * rotation, the first token of its line, so old and new share one budget.
   */
  lineOf(tokenId: string): string {
    let owner = this.lines.get(tokenId);
    if (owner === undefined) {
      const row = this.sql
        .exec<{ meters_of: string }>(
          'SELECT meters_of FROM token_meters WHERE token_id = ?',
          tokenId,
        )
        .toArray()[0];
      owner = row?.meters_of ?? tokenId;
      this.lines.set(tokenId, owner);
    }
    return owner;
  }

  /** From now on `successor` counts against the same meters as `tokenId`. */
  shareLine(successor: string, tokenId: string): void {
    this.sql.exec(
      'INSERT OR REPLACE INTO token_meters (token_id, meters_of) VALUES (?, ?)',
      successor,
      this.lineOf(tokenId),
    );
    this.lines.delete(successor);
  }
}
