/**
 * Tenants in KV. The platform key is sealed before it is stored and opened
 * only in memory on the hot path; the operator API never decrypts it.
 */
import { count } from '../stats';
import type {
  ListedTenant,
  PublicTenant,
  StoredTenant,
  Tenant,
  TenantStatus,
} from '../types/tenants';
import { type KeyRing, open, seal, sealedKid } from './crypto';
import type { KeyIndex, OriginIndex } from './indexes';
import { tenantKey } from './kv-keys';
import { Memo } from './memo';
import { randomBase62, sha256Hex } from './token';

/** A tenant as the operator API shows it: no key, sealed or not. */
export function publicTenant(t: StoredTenant | Tenant): PublicTenant {
  return {
    id: t.id,
    name: t.name,
    status: t.status,
    cors_origins: t.cors_origins ?? [],
    created_at: t.created_at,
    updated_at: t.updated_at,
  };
}

/** Most tenants one isolate remembers at once (docs/BOUNDS.md). */
const MEMO_MAX_ENTRIES = 10_000;
const memo = new Memo<Tenant | null>(MEMO_MAX_ENTRIES);

export interface NewTenant {
  name: string;
  platformKey: string;
  corsOrigins: string[];
}

export interface TenantPatch {
  name?: string;
  status?: TenantStatus;
  platform_key?: string;
  cors_origins?: string[];
}

export class TenantStore {
  constructor(
    private readonly kv: KVNamespace,
    private readonly ring: KeyRing,
    private readonly keys: KeyIndex,
    private readonly origins: OriginIndex,
    private readonly memoTtlMs: number,
  ) {}

  async create(t: NewTenant): Promise<StoredTenant> {
    const now = new Date().toISOString();
    const id = `ten_${randomBase62(16)}`;
    const tenant: StoredTenant = {
      id,
      name: t.name,
      status: 'active',
      cors_origins: t.corsOrigins,
      platform_key_sealed: await seal(this.ring, t.platformKey, id),
      key_fingerprint: await sha256Hex(t.platformKey),
      created_at: now,
      updated_at: now,
    };
    await this.put(tenant);
    await this.keys.add(tenant.key_fingerprint, id);
    await this.origins.update(id, [], t.corsOrigins);
    return tenant;
  }

  /** The stored tenant (for the operator API; nothing decrypted). */
  getStored(id: string): Promise<StoredTenant | null> {
    count('kv_reads');
    return this.kv.get<StoredTenant>(tenantKey(id), 'json');
  }

  /** The tenant with its platform key opened, memoized for the memo period (hot path). */
  async get(id: string): Promise<Tenant | null> {
    const hit = memo.get(id);
    if (hit !== undefined) return hit;
    const stored = await this.getStored(id);
    const tenant = stored && (await this.openKey(stored));
    memo.set(id, tenant, this.memoTtlMs);
    return tenant;
  }

  /** One page of tenants, from KV metadata alone (no per-tenant reads). */
  async list(
    cursor: string | undefined,
    limit: number,
  ): Promise<{ tenants: ListedTenant[]; cursor: string | null }> {
    count('kv_reads');
    const page = await this.kv.list<ListedTenant>({ prefix: tenantKey(''), cursor, limit });
    return {
      tenants: page.keys.flatMap((k) => (k.metadata ? [k.metadata] : [])),
      cursor: page.list_complete ? null : page.cursor,
    };
  }

  async update(stored: StoredTenant, patch: TenantPatch): Promise<StoredTenant> {
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
    await this.put(next);
    if (next.key_fingerprint !== stored.key_fingerprint) {
      await this.keys.add(next.key_fingerprint, stored.id);
      await this.keys.remove(stored.key_fingerprint, stored.id);
    }
    await this.origins.update(stored.id, stored.cors_origins ?? [], next.cors_origins);
    return next;
  }

  /** Removes the tenant and its index entries (its tokens are the token store's). */
  async delete(stored: StoredTenant): Promise<void> {
    await this.keys.remove(stored.key_fingerprint, stored.id);
    await this.origins.update(stored.id, stored.cors_origins ?? [], []);
    await this.kv.delete(tenantKey(stored.id));
    memo.delete(stored.id);
  }

  /** Re-seals the platform key under the current encryption key if it was sealed under another. */
  async reseal(stored: StoredTenant): Promise<boolean> {
    if (sealedKid(stored.platform_key_sealed) === this.ring.currentKid) return false;
    const platformKey = await open(this.ring, stored.platform_key_sealed, stored.id);
    await this.put({
      ...stored,
      platform_key_sealed: await seal(this.ring, platformKey, stored.id),
    });
    return true;
  }

  private async put(tenant: StoredTenant): Promise<void> {
    // Metadata (KV allows 1024 bytes) lets the tenant list come from one KV list call.
    const { cors_origins: _origins, ...listed } = publicTenant(tenant);
    await this.kv.put(tenantKey(tenant.id), JSON.stringify(tenant), { metadata: listed });
    memo.delete(tenant.id);
  }

  private async openKey(stored: StoredTenant): Promise<Tenant> {
    const { platform_key_sealed, ...rest } = stored;
    return { ...rest, platform_key: await open(this.ring, platform_key_sealed, stored.id) };
  }
}
