/**
 * The part of a tenant's TenantGuard that keeps the idempotency keys (IETF draft
 * `Idempotency-Key`) of its writes to the platform (docs/RESILIENCE.md,
 * docs/STORAGE.md), in its table `idempotency`. A key is claimed before the write goes upstream and
 * settled with the answer after; a repeat of a settled key gets that answer
 * back, a repeat while it is in flight or with another request is refused.
 * A Durable Object runs one call at a time, so two identical writes at once
 * cannot both claim a key. Keys are stored under their owner (`scopedKey`): the
 * same key sent by another token, or by a browser token, is another key.
 */
import type { TenantIo } from '../io';
import { type Chores, SWEEP_EVERY_MS } from '../part';
import type { Sql } from '../sql';

/** How long a settled answer is kept. */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
/** Largest answer body kept for a replay; a larger one is replayed as its status and code only. */
export const IDEMPOTENCY_MAX_BODY_BYTES = 64 * 1024;

/** Whose keys an Idempotency-Key is among (docs/RESILIENCE.md, "Idempotency keys on writes"). */
export interface KeyOwner {
  /** The sending token's id (for a browser token, the id of the token that minted it). */
  tokenId: string;
  /** A browser token's own partition: its keys are its own, apart from its minting token's. */
  partition?: string;
}

export interface ClaimRequest extends KeyOwner {
  key: string;
  /** SHA-256 of the method, path and body: what makes a repeat the same request. */
  fingerprint: string;
  now: number;
  /** A claim older than this is taken as abandoned (its isolate died): the key is free again. */
  inFlightMs: number;
}

export interface StoredAnswer {
  status: number;
  /** The answer's body (JSON text, secrets masked), or null when it was over the size kept. */
  body: string | null;
  /** The envelope code, for a body not kept. */
  code: number | null;
}

export type Claim =
  | { kind: 'claimed' }
  | { kind: 'in_flight' }
  | { kind: 'mismatch' }
  | { kind: 'replay'; answer: StoredAnswer };

interface Row extends Record<string, string | number | null> {
  fingerprint: string;
  state: string;
  started_at: number;
  keep_until: number;
  status: number | null;
  body: string | null;
  code: number | null;
}

/**
 * The key as stored: a gateway token's keys are its line's (itself and its
 * successors, `line`: the line's first token), so a retry after a rotation
 * still replays; a browser token's are its own.
 */
export function scopedKey(key: string, owner: KeyOwner, line: string): string {
  return owner.partition ? `browser:${owner.partition} ${key}` : `token:${line} ${key}`;
}

/** What callers reach: the idempotency middleware's three calls. */
export const IDEMPOTENCY_CALLS = ['claim', 'settle', 'release'] as const;

export class IdempotencyPart implements Chores {
  /** `lineOf`: the first token of a token's rotation line (the tokens part). */
  constructor(
    private readonly sql: Sql,
    private readonly lineOf: (tokenId: string) => string,
    private readonly io: Pick<TenantIo, 'now' | 'wakeBy'>,
  ) {
    sql.exec(`
      CREATE TABLE IF NOT EXISTS idempotency (
        key TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, state TEXT NOT NULL,
        started_at INTEGER NOT NULL, keep_until INTEGER NOT NULL,
        status INTEGER, body TEXT, code INTEGER)`);
  }

  /** Claims a key of its owner for a write, or says why not. */
  claim(req: ClaimRequest): Claim {
    const key = scopedKey(req.key, req, this.lineOf(req.tokenId));
    const row = this.sql
      .exec<Row>('SELECT * FROM idempotency WHERE key = ? AND keep_until > ?', key, req.now)
      .toArray()[0];
    if (row && row.fingerprint !== req.fingerprint) return { kind: 'mismatch' };
    if (row?.state === 'done') {
      return {
        kind: 'replay',
        answer: { status: row.status ?? 500, body: row.body, code: row.code },
      };
    }
    if (row && req.now - row.started_at < req.inFlightMs) return { kind: 'in_flight' };
    this.sql.exec(
      `INSERT OR REPLACE INTO idempotency (key, fingerprint, state, started_at, keep_until)
       VALUES (?, ?, 'in_flight', ?, ?)`,
      key,
      req.fingerprint,
      req.now,
      req.now + IDEMPOTENCY_TTL_MS,
    );
    this.io.wakeBy(this.io.now() + SWEEP_EVERY_MS);
    return { kind: 'claimed' };
  }

  /** The write's answer, kept for IDEMPOTENCY_TTL_MS from now. */
  settle(key: string, owner: KeyOwner, fingerprint: string, answer: StoredAnswer, now: number) {
    const body =
      answer.body !== null &&
      new TextEncoder().encode(answer.body).byteLength <= IDEMPOTENCY_MAX_BODY_BYTES
        ? answer.body
        : null;
    this.sql.exec(
      `UPDATE idempotency SET state = 'done', status = ?, body = ?, code = ?, keep_until = ?
       WHERE key = ? AND fingerprint = ?`,
      answer.status,
      body,
      answer.code,
      now + IDEMPOTENCY_TTL_MS,
      scopedKey(key, owner, this.lineOf(owner.tokenId)),
      fingerprint,
    );
  }

  /** The platform surely did not act: the key is free for the caller's retry. */
  release(key: string, owner: KeyOwner, fingerprint: string): void {
    this.sql.exec(
      "DELETE FROM idempotency WHERE key = ? AND fingerprint = ? AND state = 'in_flight'",
      scopedKey(key, owner, this.lineOf(owner.tokenId)),
      fingerprint,
    );
  }

  sweep(now: number): void {
    this.sql.exec('DELETE FROM idempotency WHERE keep_until <= ?', now);
  }
}
