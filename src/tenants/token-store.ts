/**
 * Gateway tokens in KV. Only a token's SHA-256 is stored; its record lives
 * under that hash (the hot-path lookup) and in its tenant's index (listing,
 * operator changes). Records of expiring tokens carry KV's own `expiration`,
 * a day after the token ends, so KV removes them.
 */
import { count } from '../stats';
import type { TokenRecord } from '../types/tenants';
import type { KeyRing } from './crypto';
import { listAll } from './indexes';
import { tenantTokenKey, tokenKey } from './kv-keys';
import { Memo } from './memo';
import { generateToken, hashToken, randomBase62 } from './token';

/** Most tokens one isolate remembers at once (docs/BOUNDS.md). */
const MEMO_MAX_ENTRIES = 10_000;
/** How long KV keeps an expired token's record, so it answers "expired", not "unknown". */
export const EXPIRED_RECORD_KEPT_S = 86_400;
/** How long KV keeps a revoked token's record, so it answers "revoked", not "unknown". */
export const REVOKED_RECORD_KEPT_S = 30 * 86_400;
/**
 * Most unknown tokens one isolate remembers: apart from the known ones, so a flood cannot push
 * those out.
 */
const UNKNOWN_MEMO_MAX_ENTRIES = 10_000;

export const newTokenId = () => `tok_${randomBase62(16)}`;

export interface NewToken {
  /** Chosen ahead (newTokenId), so what the token needs can be set up before it works. */
  id: string;
  name: string;
  scopes: string[];
  expires_at: string | null;
}

export interface Issued {
  token: string;
  record: TokenRecord;
}

/** A stored token: its hash (the KV key of its record) and its record. */
export interface TokenEntry {
  hash: string;
  record: TokenRecord;
}

/** How a token is looked up: by the hash of the presented token, or by its ids. */
export type TokenRef = { hash: string } | { tenantId: string; tokenId: string };

const memo = new Memo<TokenEntry>(MEMO_MAX_ENTRIES);
// "Unknown" is memoized too, so a repeated wrong token costs one KV read per memo period.
const unknownMemo = new Memo<null>(UNKNOWN_MEMO_MAX_ENTRIES);
const memoKey = (ref: TokenRef) =>
  'hash' in ref ? `h:${ref.hash}` : `id:${ref.tenantId}:${ref.tokenId}`;

export class TokenStore {
  constructor(
    private readonly kv: KVNamespace,
    private readonly ring: KeyRing,
    private readonly memoTtlMs: number,
  ) {}

  async issue(tenantId: string, t: NewToken): Promise<Issued> {
    const { token, kid } = await generateToken(this.ring);
    const record: TokenRecord = {
      id: t.id,
      tenant_id: tenantId,
      name: t.name,
      prefix: token.slice(0, 9),
      last4: token.slice(-4),
      scopes: t.scopes,
      created_at: new Date().toISOString(),
      expires_at: t.expires_at,
      tag_kid: kid,
    };
    await this.put({ hash: await hashToken(token), record });
    return { token, record };
  }

  /** The one token lookup: memoized for the store's memo period (none for the operator API). */
  async find(ref: TokenRef): Promise<TokenEntry | null> {
    const key = memoKey(ref);
    const hit = memo.get(key) ?? unknownMemo.get(key);
    if (hit !== undefined) return hit;
    count('kv_reads');
    let entry: TokenEntry | null = null;
    if ('hash' in ref) {
      const record = await this.kv.get<TokenRecord>(tokenKey(ref.hash), 'json');
      entry = record && { hash: ref.hash, record };
    } else {
      const { value, metadata } = await this.kv.getWithMetadata<TokenRecord>(
        tenantTokenKey(ref.tenantId, ref.tokenId),
      );
      entry = value && metadata ? { hash: value, record: metadata } : null;
    }
    if (entry) memo.set(key, entry, this.memoTtlMs);
    else unknownMemo.set(key, null, this.memoTtlMs);
    return entry;
  }

  /** A token this isolate knows without asking KV: the entry, or undefined. */
  remembered(ref: TokenRef): TokenEntry | undefined {
    return memo.get(memoKey(ref)) ?? undefined;
  }

  /** The tenant's tokens as stored in the index (never the secrets). */
  async list(tenantId: string): Promise<TokenRecord[]> {
    const keys = await listAll<TokenRecord>(this.kv, tenantTokenKey(tenantId, ''));
    return keys.flatMap((k) => (k.metadata ? [k.metadata] : []));
  }

  /** Sets a token's expiry (rotation); the TenantGuard enforces it at once. */
  async setExpiry(entry: TokenEntry, expiresAt: string): Promise<TokenRecord> {
    const record = { ...entry.record, expires_at: expiresAt };
    await this.put({ hash: entry.hash, record });
    return record;
  }

  /**
   * Revokes a token: its record stays under its hash, marked, for a while (so it
   * answers "revoked", 40102), and leaves its tenant's index. Instant refusal on
   * every isolate is the TenantGuard's job.
   */
  async revoke(entry: TokenEntry, at = new Date()): Promise<void> {
    const record: TokenRecord = { ...entry.record, revoked_at: at.toISOString() };
    const expiration = Math.ceil(at.getTime() / 1000) + REVOKED_RECORD_KEPT_S;
    await this.kv.put(tokenKey(entry.hash), JSON.stringify(record), { expiration });
    await this.kv.delete(tenantTokenKey(entry.record.tenant_id, entry.record.id));
    forget(entry);
  }

  /** Deletes every record of a token (its tenant is being deleted). */
  async remove(entry: TokenEntry): Promise<void> {
    await this.kv.delete(tokenKey(entry.hash));
    await this.kv.delete(tenantTokenKey(entry.record.tenant_id, entry.record.id));
    forget(entry);
  }

  /** A token's record under its hash (hot path) and in its tenant's index (listing). */
  private async put(entry: TokenEntry): Promise<void> {
    const { hash, record } = entry;
    const options = expiringAt(record.expires_at);
    await this.kv.put(tokenKey(hash), JSON.stringify(record), options);
    await this.kv.put(tenantTokenKey(record.tenant_id, record.id), hash, {
      ...options,
      metadata: record,
    });
    forget(entry);
  }
}

/** KV `expiration` (seconds) a day after the token ends; KV needs it 60 s ahead at least. */
function expiringAt(expiresAt: string | null): { expiration?: number } {
  if (!expiresAt) return {};
  const ends = Math.ceil(Date.parse(expiresAt) / 1000) + EXPIRED_RECORD_KEPT_S;
  return { expiration: Math.max(ends, Math.ceil(Date.now() / 1000) + 60) };
}

/** Drops a token from this isolate's memo, under both ways it is looked up. */
function forget({ hash, record }: TokenEntry): void {
  for (const key of [
    memoKey({ hash }),
    memoKey({ tenantId: record.tenant_id, tokenId: record.id }),
  ]) {
    memo.delete(key);
    unknownMemo.delete(key);
  }
}
