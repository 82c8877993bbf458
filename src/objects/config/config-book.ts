/**
 * The ConfigBook: one SQLite-backed Durable Object (named "global") that keeps what the
 * fleet file says of objects beyond their own records (docs/CONFIG-AS-CODE.md): each
 * object's `ref` (so a rename is a rename), a tenant's or plan's tags, and where a
 * tenant's platform key comes from (`env:NAME`, never the key); the applies made, and the
 * one apply running (a second is refused while it runs).
 *
 * An object without a row here has the default ref: a tenant its id, a plan its name, a
 * token its family's first id. A row is dropped when the file deletes its object; one whose
 * object went another way (the console) is ignored, and a plan made again under that name
 * takes it back.
 */
import { DurableObject } from 'cloudflare:workers';
import type { ConfigApplyRecord } from '../../types/wire';
import { openTables } from '../tables';

export type RefKind = 'tenant' | 'plan' | 'token';

/** One object's ref: `scope` is '' for tenants and plans, the tenant id for a token. */
export interface RefRow {
  kind: RefKind;
  scope: string;
  ref: string;
  /** The object: a tenant id, a plan name, a token family id. */
  target: string;
  tags: string[];
  /** A tenant's `platform_key_ref` as last applied (`env:NAME`); null: `keep`. */
  key_ref: string | null;
}

/** Applies kept for the console's history (the newest). */
const APPLIES_KEPT = 50;

type Row = Omit<RefRow, 'tags'> & { tags: string } & Record<string, SqlStorageValue>;
type AppliedRow = Record<string, SqlStorageValue> & {
  hash: string;
  at: number;
  actor: string;
  request_id: string;
  changes: number;
  applied: number;
  complete: number;
};

/** The one config book. */
export function configBook(env: { CONFIG_BOOK: DurableObjectNamespace<ConfigBook> }) {
  return env.CONFIG_BOOK.get(env.CONFIG_BOOK.idFromName('global'));
}

/** The tables, made where missing at every start. */
const TABLES = `
  CREATE TABLE IF NOT EXISTS refs (
    kind TEXT NOT NULL, scope TEXT NOT NULL, ref TEXT NOT NULL, target TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]', key_ref TEXT, PRIMARY KEY (kind, scope, ref));
  CREATE UNIQUE INDEX IF NOT EXISTS refs_by_target ON refs (kind, target);
  CREATE TABLE IF NOT EXISTS applies (
    id INTEGER PRIMARY KEY AUTOINCREMENT, hash TEXT NOT NULL, at INTEGER NOT NULL,
    actor TEXT NOT NULL, request_id TEXT NOT NULL, changes INTEGER NOT NULL,
    applied INTEGER NOT NULL, complete INTEGER NOT NULL);
  CREATE TABLE IF NOT EXISTS apply_lock (
    id INTEGER PRIMARY KEY CHECK (id = 1), hash TEXT NOT NULL, until INTEGER NOT NULL);
`;

export class ConfigBook extends DurableObject<Cloudflare.Env> {
  private readonly sql = openTables(this.ctx, TABLES);

  refs(): RefRow[] {
    return this.sql
      .exec<Row>('SELECT * FROM refs ORDER BY kind, scope, ref')
      .toArray()
      .map((r) => ({ ...r, tags: JSON.parse(r.tags) as string[] }));
  }

  /** Sets an object's ref (and tags, key ref): a row naming the same ref or object is replaced. */
  put(row: RefRow): void {
    this.sql.exec(
      'DELETE FROM refs WHERE (kind = ? AND target = ?) OR (kind = ? AND scope = ? AND ref = ?)',
      row.kind,
      row.target,
      row.kind,
      row.scope,
      row.ref,
    );
    this.sql.exec(
      'INSERT INTO refs (kind, scope, ref, target, tags, key_ref) VALUES (?, ?, ?, ?, ?, ?)',
      row.kind,
      row.scope,
      row.ref,
      row.target,
      JSON.stringify(row.tags),
      row.key_ref,
    );
  }

  /** Forgets objects that are gone (a tenant's tokens with it). */
  drop(kind: RefKind, targets: string[]): void {
    for (const target of targets) {
      this.sql.exec('DELETE FROM refs WHERE kind = ? AND target = ?', kind, target);
      if (kind === 'tenant')
        this.sql.exec("DELETE FROM refs WHERE kind = 'token' AND scope = ?", target);
    }
  }

  /**
   * Takes the apply lock for `hash` until `until` (ms): false while another apply holds it.
   * A lock left by an apply that died ends on its own.
   */
  lock(hash: string, now: number, until: number): boolean {
    const held = this.sql
      .exec<{ hash: string; until: number }>('SELECT hash, until FROM apply_lock')
      .toArray()[0];
    if (held && held.until > now) return false;
    this.sql.exec(
      'INSERT OR REPLACE INTO apply_lock (id, hash, until) VALUES (1, ?, ?)',
      hash,
      until,
    );
    return true;
  }

  unlock(hash: string): void {
    this.sql.exec('DELETE FROM apply_lock WHERE hash = ?', hash);
  }

  recordApply(entry: ConfigApplyRecord): void {
    this.sql.exec(
      `INSERT INTO applies (hash, at, actor, request_id, changes, applied, complete)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
      entry.hash,
      Date.parse(entry.at),
      entry.actor,
      entry.request_id,
      entry.changes,
      entry.applied,
      entry.complete ? 1 : 0,
    );
    this.sql.exec(
      'DELETE FROM applies WHERE id <= (SELECT MAX(id) FROM applies) - ?',
      APPLIES_KEPT,
    );
  }

  /** The newest applies first. */
  applies(limit: number): ConfigApplyRecord[] {
    return this.sql
      .exec<AppliedRow>('SELECT * FROM applies ORDER BY id DESC LIMIT ?', limit)
      .toArray()
      .map((r) => ({
        hash: r.hash,
        at: new Date(r.at).toISOString(),
        actor: r.actor,
        request_id: r.request_id,
        changes: r.changes,
        applied: r.applied,
        complete: r.complete === 1,
      }));
  }
}
