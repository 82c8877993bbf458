/**
 * The tenant store in Workers KV. KV is the source of tenants and tokens,
 * never of counters (see docs/STORAGE.md for every key prefix).
 */
import { generateToken, hashToken, randomBase62, sha256Hex } from './token';
import { Memo } from './memo';
import type { Tenant, TokenRecord } from './types';

export const tenantKey = (id: string) => `tenant:${id}`;
export const tokenKey = (hash: string) => `token:${hash}`;
/** Index of the tenants that share one platform key, for cache purges. */
export const keyTenantKey = (fingerprint: string, tenantId: string) => `key-tenants:${fingerprint}:${tenantId}`;
/** Index of a tenant's tokens: value is the token hash, metadata the record. */
export const tenantTokenKey = (tenantId: string, tokenId: string) => `tenant-token:${tenantId}:${tokenId}`;

/** Most tokens and tenants one isolate remembers at once (README, limits). */
export const MEMO_MAX_ENTRIES = 10_000;

// `null` memoizes "unknown", so a flood of wrong tokens cannot hammer KV.
const tokenMemo = new Memo<TokenRecord | null>(MEMO_MAX_ENTRIES);
const tenantMemo = new Memo<Tenant | null>(MEMO_MAX_ENTRIES);

export interface Issued {
  token: string;
  record: TokenRecord;
}

export class TenantStore {
  constructor(
    private readonly kv: KVNamespace,
    private readonly memoTtlMs: number,
  ) {}

  async createTenant(name: string, platformKey: string): Promise<{ tenant: Tenant; issued: Issued }> {
    const now = new Date().toISOString();
    const tenant: Tenant = {
      id: `ten_${randomBase62(16)}`,
      name,
      platform_key: platformKey,
      key_fingerprint: await sha256Hex(platformKey),
      status: 'active',
      created_at: now,
      updated_at: now,
    };
    await this.kv.put(tenantKey(tenant.id), JSON.stringify(tenant));
    await this.kv.put(keyTenantKey(tenant.key_fingerprint, tenant.id), '');
    const issued = await this.issueToken(tenant.id, 'default');
    return { tenant, issued };
  }

  async issueToken(tenantId: string, name: string): Promise<Issued> {
    const token = generateToken();
    const record: TokenRecord = {
      id: `tok_${randomBase62(16)}`,
      tenant_id: tenantId,
      name,
      prefix: token.slice(0, 9),
      last4: token.slice(-4),
      created_at: new Date().toISOString(),
    };
    const hash = await hashToken(token);
    await this.kv.put(tokenKey(hash), JSON.stringify(record));
    await this.kv.put(tenantTokenKey(tenantId, record.id), hash, { metadata: record });
    return { token, record };
  }

  /** The tenant's tokens as stored in the index (never the secrets). */
  async listTokens(tenantId: string): Promise<TokenRecord[]> {
    const out: TokenRecord[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.kv.list<TokenRecord>({ prefix: tenantTokenKey(tenantId, ''), cursor });
      for (const key of page.keys) if (key.metadata) out.push(key.metadata);
      cursor = page.list_complete ? undefined : page.cursor;
    } while (cursor);
    return out;
  }

  /** Ids of the tenants whose platform key has this fingerprint. */
  async tenantsSharingKey(fingerprint: string): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.kv.list({ prefix: keyTenantKey(fingerprint, ''), cursor });
      for (const key of page.keys) ids.push(key.name.slice(key.name.lastIndexOf(':') + 1));
      cursor = page.list_complete ? undefined : page.cursor;
    } while (cursor);
    return ids;
  }

  tokenHash(tenantId: string, tokenId: string): Promise<string | null> {
    return this.kv.get(tenantTokenKey(tenantId, tokenId));
  }

  /** Deletes a token's records; instant refusal is the TenantGuard's job. */
  async deleteToken(tenantId: string, tokenId: string): Promise<boolean> {
    const hash = await this.tokenHash(tenantId, tokenId);
    if (!hash) return false;
    await this.kv.delete(tokenKey(hash));
    await this.kv.delete(tenantTokenKey(tenantId, tokenId));
    tokenMemo.delete(hash);
    return true;
  }

  async getTenant(id: string): Promise<Tenant | null> {
    const hit = tenantMemo.get(id);
    if (hit !== undefined) return hit;
    const tenant = await this.kv.get<Tenant>(tenantKey(id), 'json');
    tenantMemo.set(id, tenant, this.memoTtlMs);
    return tenant;
  }

  /** The token record for a token hash, memoized for the memo period. */
  async findToken(hash: string): Promise<TokenRecord | null> {
    const hit = tokenMemo.get(hash);
    if (hit !== undefined) return hit;
    const record = await this.kv.get<TokenRecord>(tokenKey(hash), 'json');
    tokenMemo.set(hash, record, this.memoTtlMs);
    return record;
  }
}
