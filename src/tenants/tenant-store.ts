/**
 * Tenants in KV. The platform key is sealed before it is stored and opened
 * only in memory on the hot path; the operator API never decrypts it.
 */
import { invalidField } from '../errors';
import { sha256Hex } from '../hash';
import { count } from '../stats';
import type {
  PublicTenant,
  StoredTenant,
  Tenant,
  TenantMetadata,
  TenantStatus,
} from '../types/tenants';
import { type KeyRing, open, seal, sealedKid } from './crypto';
import type { KeyIndex, OriginIndex } from './indexes';
import { tenantKey } from './kv-keys';
import { Memo } from './memo';
import { randomBase62 } from './token';

/** A tenant as the operator API shows it: no key, sealed or not; its plan is the PlanBook's. */
export function publicTenant(t: StoredTenant | Tenant, plan: string | null): PublicTenant {
  return { ...shownOf(t), plan };
}

/** What the operator API shows of a tenant's record (its list metadata, and its origins). */
function shownOf(t: StoredTenant | Tenant): TenantMetadata & { cors_origins: string[] } {
  return {
    id: t.id,
    name: t.name,
    status: t.status,
    cors_origins: t.cors_origins ?? [],
    key_fingerprint: shortFingerprint(t.key_fingerprint),
    created_at: t.created_at,
    updated_at: t.updated_at,
  };
}

/** Tells keys apart without being a usable hash of the whole key (docs/OPERATING.md). */
export function shortFingerprint(fingerprint: string): string {
  return fingerprint.slice(0, 16);
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
    await this.keys.add(tenant.key_fingerprint, id, tenant.name);
    await this.origins.update(id, [], t.corsOrigins);
    return tenant;
  }

  /**
   * A tenant with this name (any case, spaces at the ends ignored) and this platform
   * key, if there is one: creating a second is almost always a repeated submit.
   * Best effort, not a guarantee: KV has no compare-and-set and lists are eventually
   * consistent, so two creations at once (or within KV's propagation, up to 60 s from
   * another location) can both find none and both be made.
   */
  async twinOf(name: string, platformKey: string): Promise<string | null> {
    const wanted = name.trim().toLowerCase();
    for (const t of await this.keys.sharing(await sha256Hex(platformKey))) {
      const other = t.name ?? (await this.getStored(t.id))?.name;
      if (other?.trim().toLowerCase() === wanted) return t.id;
    }
    return null;
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
  ): Promise<{ tenants: TenantMetadata[]; cursor: string | null }> {
    count('kv_reads');
    const page = await this.kv.list<TenantMetadata>({ prefix: tenantKey(''), cursor, limit });
    return {
      tenants: page.keys.flatMap((k) => (k.metadata ? [listedRow(k.metadata)] : [])),
      cursor: page.list_complete ? null : page.cursor,
    };
  }

  /**
   * Tenants whose name or id holds `q` (any case), from KV metadata: KV has no
   * search, so this reads list pages of up to 1,000 rows, at most
   * SEARCH_SCAN_MAX rows a call. The cursor says where to go on (a KV cursor
   * and a position in its page); a page can hold fewer than `limit` rows (even
   * none) and still have a cursor, when the scan bound was reached first.
   */
  async search(
    q: string,
    cursor: string | undefined,
    limit: number,
  ): Promise<{ tenants: TenantMetadata[]; cursor: string | null }> {
    const needle = q.toLowerCase();
    let at = cursor ? readSearchCursor(cursor) : { k: null, o: 0 };
    const found: TenantMetadata[] = [];
    let scanned = 0;
    for (;;) {
      count('kv_reads');
      const page = await this.kv.list<TenantMetadata>({
        prefix: tenantKey(''),
        cursor: at.k ?? undefined,
        limit: 1000,
      });
      for (let i = at.o; i < page.keys.length; i++) {
        const row = page.keys[i]?.metadata;
        if (!row) continue;
        if (row.name.toLowerCase().includes(needle) || row.id.toLowerCase().includes(needle)) {
          found.push(listedRow(row));
          if (found.length === limit) {
            const more = i + 1 < page.keys.length || !page.list_complete;
            return { tenants: found, cursor: more ? searchCursor({ k: at.k, o: i + 1 }) : null };
          }
        }
      }
      scanned += page.keys.length - at.o;
      if (page.list_complete) return { tenants: found, cursor: null };
      at = { k: page.cursor, o: 0 };
      if (scanned >= SEARCH_SCAN_MAX) return { tenants: found, cursor: searchCursor(at) };
    }
  }

  /** `stored` with `patch` merged (a new platform key sealed); nothing is written. */
  async merged(stored: StoredTenant, patch: TenantPatch): Promise<StoredTenant> {
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
    return next;
  }

  /**
   * Writes `next` over `prev` (the record KV holds) and moves its index entries; writing
   * the same pair again changes nothing more. Only the tenant's TenantGuard calls this
   * (and delete), one call at a time, with the record it decided
   * (objects/tenant/record/tenant-record.ts): KV has no compare-and-set.
   */
  async write(prev: StoredTenant, next: StoredTenant): Promise<void> {
    await this.put(next);
    if (next.key_fingerprint !== prev.key_fingerprint || next.name !== prev.name) {
      await this.keys.add(next.key_fingerprint, prev.id, next.name);
    }
    if (next.key_fingerprint !== prev.key_fingerprint) {
      await this.keys.remove(prev.key_fingerprint, prev.id);
    }
    await this.origins.update(prev.id, prev.cors_origins ?? [], next.cors_origins);
  }

  /** Removes the tenant and its index entries (its tokens are the token store's). */
  async delete(stored: StoredTenant): Promise<void> {
    await this.keys.remove(stored.key_fingerprint, stored.id);
    await this.origins.update(stored.id, stored.cors_origins ?? [], []);
    await this.kv.delete(tenantKey(stored.id));
    memo.delete(stored.id);
  }

  /**
   * `stored` with its platform key sealed under the current encryption key, or null when
   * it is sealed under that one already; nothing is written.
   */
  async resealed(stored: StoredTenant): Promise<StoredTenant | null> {
    if (sealedKid(stored.platform_key_sealed) === this.ring.currentKid) return null;
    const platformKey = await open(this.ring, stored.platform_key_sealed, stored.id);
    return { ...stored, platform_key_sealed: await seal(this.ring, platformKey, stored.id) };
  }

  /**
   * Drops a tenant its TenantGuard just changed (or deleted) from this isolate's memos,
   * as the guard's own writes do in its isolate: the next request here reads KV.
   */
  forget(before: StoredTenant, after: StoredTenant | null): void {
    memo.delete(before.id);
    this.origins.forget([...(before.cors_origins ?? []), ...(after?.cors_origins ?? [])]);
  }

  private async put(tenant: StoredTenant): Promise<void> {
    // Metadata (KV allows 1024 bytes) lets the tenant list come from one KV list call.
    const { cors_origins: _origins, ...listed } = shownOf(tenant);
    // A plan an older record carried goes: the PlanBook alone says it.
    const { plan: _plan, ...record } = tenant as StoredTenant & { plan?: unknown };
    await this.kv.put(tenantKey(tenant.id), JSON.stringify(record), { metadata: listed });
    memo.delete(tenant.id);
  }

  private async openKey(stored: StoredTenant): Promise<Tenant> {
    const { platform_key_sealed, ...rest } = stored;
    return { ...rest, platform_key: await open(this.ring, platform_key_sealed, stored.id) };
  }
}

/** Most tenant rows one search call reads (docs/BOUNDS.md): five KV list calls. */
export const SEARCH_SCAN_MAX = 5000;

/** Rows written before the fingerprint was kept in metadata have none; an old row's plan goes. */
function listedRow(row: TenantMetadata & { plan?: unknown }): TenantMetadata {
  const { plan: _plan, ...kept } = row;
  return { ...kept, key_fingerprint: row.key_fingerprint ?? null };
}

interface SearchPosition {
  /** The KV cursor of the list page to read (null: the first page). */
  k: string | null;
  /** Rows of that page already looked at. */
  o: number;
}

const SEARCH_CURSOR_PREFIX = 's1.';

function searchCursor(at: SearchPosition): string {
  return SEARCH_CURSOR_PREFIX + btoa(JSON.stringify(at));
}

/** Where a search cursor says to go on; a 400 on `cursor` when no search made it. */
export function readSearchCursor(text: string): SearchPosition {
  const bad = invalidField('query', 'cursor', 'cursor must come from a search (a list with q)');
  if (!text.startsWith(SEARCH_CURSOR_PREFIX)) throw bad;
  try {
    const at = JSON.parse(atob(text.slice(SEARCH_CURSOR_PREFIX.length))) as SearchPosition;
    if ((at.k === null || typeof at.k === 'string') && Number.isInteger(at.o) && at.o >= 0) {
      return at;
    }
  } catch {}
  throw bad;
}
