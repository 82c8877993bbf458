/**
 * Gateway tokens in KV. Only a token's SHA-256 is stored; its record lives
 * under that hash (the hot-path lookup) and in its tenant's index (browser
 * tokens' minting-token check, and the one-time adoption by the TenantGuard).
 * Records of expiring tokens carry KV's own `expiration`, a day after the
 * token ends, so KV removes them. Isolates only read here and make secrets
 * (`mint`); the records are written by the tenant's TenantGuard alone, from
 * what it decided (objects/tenant/tokens/token-registry.ts).
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

/** A new token's secret, shown once, and what its record takes from it (never the secret). */
export interface Minted {
  token: string;
  id: string;
  hash: string;
  prefix: string;
  last4: string;
  tag_kid: string;
}

/** A token issued: the secret (shown once) and its record as decided. */
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

  /**
   * A new token's secret, tagged under the ring's current key, and the parts of its
   * record that come from it. Nothing is stored: the tenant's TenantGuard decides the
   * token and writes its records (objects/tenant/tokens/token-registry.ts).
   */
  async mint(): Promise<Minted> {
    const { token, kid } = await generateToken(this.ring);
    return {
      token,
      id: newTokenId(),
      hash: await hashToken(token),
      prefix: token.slice(0, 9),
      last4: token.slice(-4),
      tag_kid: kid,
    };
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

  /** Drops tokens that just changed from this isolate's memo: its next request reads KV. */
  forget(entries: TokenEntry[]): void {
    for (const entry of entries) forget(entry);
  }
}

/**
 * Writes a token's decided record where authentication reads it (only the
 * TenantGuard calls this, in decision order): under its hash, and in its
 * tenant's index. A revoked token's record stays under its hash, marked, for a
 * while (so it answers "revoked", 40102), and leaves the index.
 */
export async function writeTokenRecord(kv: KVNamespace, entry: TokenEntry): Promise<void> {
  const { hash, record } = entry;
  const indexKey = tenantTokenKey(record.tenant_id, record.id);
  if (record.revoked_at) {
    const kept = Math.ceil(Date.parse(record.revoked_at) / 1000) + REVOKED_RECORD_KEPT_S;
    const expiration = Math.max(kept, Math.ceil(Date.now() / 1000) + 60);
    await kv.put(tokenKey(hash), JSON.stringify(record), { expiration });
    await kv.delete(indexKey);
  } else {
    const options = expiringAt(record.expires_at);
    await kv.put(tokenKey(hash), JSON.stringify(record), options);
    await kv.put(indexKey, hash, { ...options, metadata: record });
  }
  forget(entry);
}

/** Deletes every record of a token (its tenant is being deleted). */
export async function eraseTokenRecord(kv: KVNamespace, entry: TokenEntry): Promise<void> {
  await kv.delete(tokenKey(entry.hash));
  await kv.delete(tenantTokenKey(entry.record.tenant_id, entry.record.id));
  forget(entry);
}

/** KV reads of index entries in flight at once while a TenantGuard takes its tokens in. */
const INDEX_READS_AT_ONCE = 50;

/** Every token of a tenant as KV's index holds it: what the TenantGuard takes in once. */
export async function indexedTokens(kv: KVNamespace, tenantId: string): Promise<TokenEntry[]> {
  const keys = (await listAll<TokenRecord>(kv, tenantTokenKey(tenantId, ''))).filter(
    (key): key is KVNamespaceListKey<TokenRecord> & { metadata: TokenRecord } => !!key.metadata,
  );
  const entries: TokenEntry[] = [];
  for (let at = 0; at < keys.length; at += INDEX_READS_AT_ONCE) {
    const batch = keys.slice(at, at + INDEX_READS_AT_ONCE);
    const hashes = await Promise.all(batch.map((key) => kv.get(key.name)));
    batch.forEach((key, i) => {
      const hash = hashes[i];
      if (hash) entries.push({ hash, record: key.metadata });
    });
  }
  return entries;
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
