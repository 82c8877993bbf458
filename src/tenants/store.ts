/**
 * The tenant store in Workers KV. KV is the source of tenants and tokens,
 * never of counters (see docs/STORAGE.md for every key prefix).
 */
import { type KeyRing, keyRing, open, seal, sealedKid } from './crypto';
import { Memo } from './memo';
import { generateToken, hashToken, randomBase62, sha256Hex } from './token';
import type { ListedTenant, StoredTenant, Tenant, TenantStatus, TokenRecord } from './types';
import { publicTenant } from './types';

const tenantKey = (id: string) => `tenant:${id}`;
const tokenKey = (hash: string) => `token:${hash}`;
/** Index of the tenants that share one platform key, for cache purges. */
const keyTenantKey = (fingerprint: string, tenantId: string) =>
  `key-tenants:${fingerprint}:${tenantId}`;
/** Index of the origins some tenant allows, so preflights can be answered without a token. */
// Encoded: an origin's own ':' (before a port) must not make `http://a` a prefix of `http://a:8080`.
const corsOriginKey = (origin: string, tenantId: string) =>
  `cors-origin:${encodeURIComponent(origin)}:${tenantId}`;
/** Index of a tenant's tokens: value is the token hash, metadata the record. */
const tenantTokenKey = (tenantId: string, tokenId: string) => `tenant-token:${tenantId}:${tokenId}`;

/** Most tokens and tenants one isolate remembers at once (README, limits). */
const MEMO_MAX_ENTRIES = 10_000;

// `null` memoizes "unknown", so a flood of wrong tokens cannot hammer KV.
const tokenMemo = new Memo<TokenRecord | null>(MEMO_MAX_ENTRIES);
const tenantMemo = new Memo<Tenant | null>(MEMO_MAX_ENTRIES);
const originMemo = new Memo<boolean>(MEMO_MAX_ENTRIES);

const idMemoKey = (tenantId: string, tokenId: string) => `id:${tenantId}:${tokenId}`;

/** Drops a token from this isolate's memo, under both ways it is looked up. */
function forgetToken(hash: string, record: Pick<TokenRecord, 'tenant_id' | 'id'>) {
  tokenMemo.delete(hash);
  tokenMemo.delete(idMemoKey(record.tenant_id, record.id));
}

export interface Issued {
  token: string;
  record: TokenRecord;
}

export interface NewToken {
  name: string;
  scopes: string[];
  expires_at: string | null;
}

export interface TenantPatch {
  name?: string;
  status?: TenantStatus;
  platform_key?: string;
  cors_origins?: string[];
}

/**
 * The store for a request: memoized reads on the hot path (`memo`), direct
 * reads for the operator API, which must see its own writes.
 */
export async function tenantStore(
  env: { TENANTS: KVNamespace },
  settings: { KEY_ENCRYPTION_KEY: string; TENANT_MEMO_TTL_MS: number },
  memo: boolean,
) {
  return new TenantStore(
    env.TENANTS,
    await keyRing(settings.KEY_ENCRYPTION_KEY),
    memo ? settings.TENANT_MEMO_TTL_MS : 0,
  );
}

export class TenantStore {
  constructor(
    private readonly kv: KVNamespace,
    private readonly ring: KeyRing,
    private readonly memoTtlMs = 0,
  ) {}

  async createTenant(
    name: string,
    platformKey: string,
    firstToken: NewToken,
    corsOrigins: string[] = [],
  ): Promise<{ tenant: StoredTenant; issued: Issued }> {
    const now = new Date().toISOString();
    const id = `ten_${randomBase62(16)}`;
    const tenant: StoredTenant = {
      id,
      name,
      status: 'active',
      cors_origins: corsOrigins,
      platform_key_sealed: await seal(this.ring, platformKey, id),
      key_fingerprint: await sha256Hex(platformKey),
      created_at: now,
      updated_at: now,
    };
    await this.putTenant(tenant);
    await this.kv.put(keyTenantKey(tenant.key_fingerprint, id), '');
    await this.indexOrigins(id, [], corsOrigins);
    return { tenant, issued: await this.issueToken(id, firstToken) };
  }

  /** The stored tenant (for the operator API; nothing decrypted). */
  getStored(id: string): Promise<StoredTenant | null> {
    return this.kv.get<StoredTenant>(tenantKey(id), 'json');
  }

  /** The tenant with its platform key opened, memoized for the memo period (hot path). */
  async getTenant(id: string): Promise<Tenant | null> {
    const hit = tenantMemo.get(id);
    if (hit !== undefined) return hit;
    const stored = await this.getStored(id);
    const tenant = stored && (await this.openTenant(stored));
    tenantMemo.set(id, tenant, this.memoTtlMs);
    return tenant;
  }

  /** One page of tenants, from KV metadata alone (no per-tenant reads). */
  async listTenants(
    cursor: string | undefined,
    limit: number,
  ): Promise<{ tenants: ListedTenant[]; cursor: string | null }> {
    const page = await this.kv.list<ListedTenant>({ prefix: 'tenant:', cursor, limit });
    return {
      tenants: page.keys.flatMap((k) => (k.metadata ? [k.metadata] : [])),
      cursor: page.list_complete ? null : page.cursor,
    };
  }

  async updateTenant(stored: StoredTenant, patch: TenantPatch): Promise<StoredTenant> {
    const next: StoredTenant = {
      ...stored,
      name: patch.name ?? stored.name,
      status: patch.status ?? stored.status,
      cors_origins: patch.cors_origins ?? stored.cors_origins ?? [],
      updated_at: new Date().toISOString(),
    };
    if (patch.platform_key !== undefined) {
      next.platform_key_sealed = await seal(this.ring, patch.platform_key, stored.id);
      next.key_fingerprint = await sha256Hex(patch.platform_key);
    }
    await this.putTenant(next);
    if (next.key_fingerprint !== stored.key_fingerprint) {
      await this.kv.put(keyTenantKey(next.key_fingerprint, stored.id), '');
      await this.kv.delete(keyTenantKey(stored.key_fingerprint, stored.id));
    }
    await this.indexOrigins(stored.id, stored.cors_origins ?? [], next.cors_origins);
    return next;
  }

  /** True when some tenant allows this origin (memoized; answers preflights). */
  async originKnown(origin: string): Promise<boolean> {
    const hit = originMemo.get(origin);
    if (hit !== undefined) return hit;
    const page = await this.kv.list({ prefix: corsOriginKey(origin, ''), limit: 1 });
    const known = page.keys.length > 0;
    originMemo.set(origin, known, this.memoTtlMs);
    return known;
  }

  private async indexOrigins(tenantId: string, before: string[], after: string[]): Promise<void> {
    for (const origin of before.filter((o) => !after.includes(o)))
      await this.kv.delete(corsOriginKey(origin, tenantId));
    for (const origin of after.filter((o) => !before.includes(o)))
      await this.kv.put(corsOriginKey(origin, tenantId), '');
    for (const origin of [...before, ...after]) originMemo.delete(origin);
  }

  /** Removes the tenant, its tokens and index entries. */
  async deleteTenant(stored: StoredTenant): Promise<void> {
    for (const token of await this.listTokens(stored.id))
      await this.deleteToken(stored.id, token.id);
    await this.kv.delete(keyTenantKey(stored.key_fingerprint, stored.id));
    await this.indexOrigins(stored.id, stored.cors_origins ?? [], []);
    await this.kv.delete(tenantKey(stored.id));
    tenantMemo.delete(stored.id);
  }

  /** Re-seals the platform key under the current encryption key if it was sealed under another. */
  async reseal(stored: StoredTenant): Promise<boolean> {
    if (sealedKid(stored.platform_key_sealed) === this.ring.currentKid) return false;
    const platformKey = await open(this.ring, stored.platform_key_sealed, stored.id);
    await this.putTenant({
      ...stored,
      platform_key_sealed: await seal(this.ring, platformKey, stored.id),
    });
    return true;
  }

  async issueToken(tenantId: string, t: NewToken): Promise<Issued> {
    const token = generateToken();
    const record: TokenRecord = {
      id: `tok_${randomBase62(16)}`,
      tenant_id: tenantId,
      name: t.name,
      prefix: token.slice(0, 9),
      last4: token.slice(-4),
      scopes: t.scopes,
      created_at: new Date().toISOString(),
      expires_at: t.expires_at,
    };
    await this.putToken(await hashToken(token), record);
    return { token, record };
  }

  /** The token record for a token hash, memoized for the memo period. */
  async findToken(hash: string): Promise<TokenRecord | null> {
    const hit = tokenMemo.get(hash);
    if (hit !== undefined) return hit;
    const record = await this.kv.get<TokenRecord>(tokenKey(hash), 'json');
    tokenMemo.set(hash, record, this.memoTtlMs);
    return record;
  }

  /** A token record by id (for browser tokens, which name their minting token), memoized. */
  async findTokenById(tenantId: string, tokenId: string): Promise<TokenRecord | null> {
    const memoKey = idMemoKey(tenantId, tokenId);
    const hit = tokenMemo.get(memoKey);
    if (hit !== undefined) return hit;
    const record = (await this.getToken(tenantId, tokenId))?.record ?? null;
    tokenMemo.set(memoKey, record, this.memoTtlMs);
    return record;
  }

  /** The tenant's tokens as stored in the index (never the secrets). */
  async listTokens(tenantId: string): Promise<TokenRecord[]> {
    const keys = await this.listAll<TokenRecord>(tenantTokenKey(tenantId, ''));
    return keys.flatMap((k) => (k.metadata ? [k.metadata] : []));
  }

  async getToken(
    tenantId: string,
    tokenId: string,
  ): Promise<{ hash: string; record: TokenRecord } | null> {
    const { value, metadata } = await this.kv.getWithMetadata<TokenRecord>(
      tenantTokenKey(tenantId, tokenId),
    );
    return value && metadata ? { hash: value, record: metadata } : null;
  }

  /** Sets a token's expiry (rotation); the TenantGuard enforces it at once. */
  async setTokenExpiry(
    tenantId: string,
    tokenId: string,
    expiresAt: string,
  ): Promise<TokenRecord | null> {
    const found = await this.getToken(tenantId, tokenId);
    if (!found) return null;
    const record = { ...found.record, expires_at: expiresAt };
    await this.putToken(found.hash, record);
    return record;
  }

  /** Deletes a token's records; instant refusal is the TenantGuard's job. */
  async deleteToken(tenantId: string, tokenId: string): Promise<boolean> {
    const found = await this.getToken(tenantId, tokenId);
    if (!found) return false;
    await this.kv.delete(tokenKey(found.hash));
    await this.kv.delete(tenantTokenKey(tenantId, tokenId));
    forgetToken(found.hash, found.record);
    return true;
  }

  /** Ids of the tenants whose platform key has this fingerprint. */
  async tenantsSharingKey(fingerprint: string): Promise<string[]> {
    const keys = await this.listAll(keyTenantKey(fingerprint, ''));
    return keys.map((k) => k.name.slice(k.name.lastIndexOf(':') + 1));
  }

  /** Every key under a prefix, page after page. */
  private async listAll<M>(prefix: string): Promise<KVNamespaceListKey<M>[]> {
    const keys: KVNamespaceListKey<M>[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.kv.list<M>({ prefix, cursor });
      keys.push(...page.keys);
      cursor = page.list_complete ? undefined : page.cursor;
    } while (cursor);
    return keys;
  }

  /** A token's record under its hash (hot path) and in its tenant's index (listing). */
  private async putToken(hash: string, record: TokenRecord): Promise<void> {
    await this.kv.put(tokenKey(hash), JSON.stringify(record));
    await this.kv.put(tenantTokenKey(record.tenant_id, record.id), hash, { metadata: record });
    forgetToken(hash, record);
  }

  private async putTenant(tenant: StoredTenant): Promise<void> {
    // Metadata (KV allows 1024 bytes) lets the tenant list come from one KV list call.
    const { cors_origins: _origins, ...listed } = publicTenant(tenant);
    await this.kv.put(tenantKey(tenant.id), JSON.stringify(tenant), { metadata: listed });
    tenantMemo.delete(tenant.id);
  }

  private async openTenant(stored: StoredTenant): Promise<Tenant> {
    const { platform_key_sealed, ...rest } = stored;
    return { ...rest, platform_key: await open(this.ring, platform_key_sealed, stored.id) };
  }
}
