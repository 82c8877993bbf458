/**
 * The tenant store in Workers KV. KV is the source of tenants and tokens,
 * never of counters (see docs/STORAGE.md for every key prefix).
 */
import { generateToken, hashToken, randomBase62 } from './token';
import { Memo } from './memo';
import type { Tenant, TokenRecord } from './types';

export const tenantKey = (id: string) => `tenant:${id}`;
export const tokenKey = (hash: string) => `token:${hash}`;

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
      status: 'active',
      created_at: now,
      updated_at: now,
    };
    await this.kv.put(tenantKey(tenant.id), JSON.stringify(tenant));
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
    await this.kv.put(tokenKey(await hashToken(token)), JSON.stringify(record));
    return { token, record };
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
