/**
 * The two KV indexes beside tenants and tokens: which tenants share a
 * platform key (for cache purges and versions) and which origins some tenant
 * allows (to answer preflights without a token).
 */
import { count } from '../stats';
import { corsOriginKey, keyTenantKey, lastSegment } from './kv-keys';
import { Memo } from './memo';

/** Most origins one isolate remembers at once (docs/BOUNDS.md). */
const ORIGIN_MEMO_MAX = 10_000;
const originMemo = new Memo<boolean>(ORIGIN_MEMO_MAX);
/** The owner part of the `cors-origin:` entry of an origin OAuth apps call from. */
const OAUTH_ORIGIN_OWNER = 'oauth';

export class KeyIndex {
  constructor(private readonly kv: KVNamespace) {}

  /** The tenant's name rides along as metadata, so a twin is found with one list call. */
  add(fingerprint: string, tenantId: string, name: string): Promise<void> {
    return this.kv.put(keyTenantKey(fingerprint, tenantId), '', { metadata: { name } });
  }

  remove(fingerprint: string, tenantId: string): Promise<void> {
    return this.kv.delete(keyTenantKey(fingerprint, tenantId));
  }

  /** Ids of the tenants whose platform key has this fingerprint. */
  async tenantsSharing(fingerprint: string): Promise<string[]> {
    return (await this.sharing(fingerprint)).map((t) => t.id);
  }

  /** The tenants whose platform key has this fingerprint, with their names (null: kept before names were). */
  async sharing(fingerprint: string): Promise<{ id: string; name: string | null }[]> {
    const keys = await listAll<{ name?: string }>(this.kv, keyTenantKey(fingerprint, ''));
    return keys.map((k) => ({ id: lastSegment(k.name), name: k.metadata?.name ?? null }));
  }
}

export class OriginIndex {
  constructor(
    private readonly kv: KVNamespace,
    private readonly memoTtlMs: number,
  ) {}

  /**
   * True when some tenant allows this origin (memoized; answers preflights).
   * `beforeKvRead` runs only when KV must be asked (pre-auth throttling).
   */
  async known(origin: string, beforeKvRead?: () => Promise<void>): Promise<boolean> {
    const hit = originMemo.get(origin);
    if (hit !== undefined) return hit;
    await beforeKvRead?.();
    count('kv_reads');
    const page = await this.kv.list({ prefix: corsOriginKey(origin, ''), limit: 1 });
    const known = page.keys.length > 0;
    originMemo.set(origin, known, this.memoTtlMs);
    return known;
  }

  /** Moves a tenant's entries from the origins it allowed to those it allows now. */
  async update(tenantId: string, before: string[], after: string[]): Promise<void> {
    for (const origin of before.filter((o) => !after.includes(o))) {
      await this.kv.delete(corsOriginKey(origin, tenantId));
    }
    for (const origin of after.filter((o) => !before.includes(o))) {
      await this.kv.put(corsOriginKey(origin, tenantId), '');
    }
    this.forget([...before, ...after]);
  }

  /**
   * An origin an app approved through OAuth calls from (docs/OAUTH.md, "Browser apps"):
   * its preflights pass until `until` (ms; written again by each approval). It grants
   * nothing more: the request itself must carry that app's token.
   */
  async allowForOAuth(origin: string, until: number): Promise<void> {
    const expiration = Math.max(Math.ceil(until / 1000), Math.ceil(Date.now() / 1000) + 60);
    await this.kv.put(corsOriginKey(origin, OAUTH_ORIGIN_OWNER), '', { expiration });
    this.forget([origin]);
  }

  /** Drops these origins from this isolate's memo: the next preflight asks KV. */
  forget(origins: string[]): void {
    for (const origin of origins) originMemo.delete(origin);
  }
}

/** Every key under a prefix, page after page. */
export async function listAll<M>(
  kv: KVNamespace,
  prefix: string,
): Promise<KVNamespaceListKey<M>[]> {
  const keys: KVNamespaceListKey<M>[] = [];
  let cursor: string | undefined;
  do {
    count('kv_reads');
    const page = await kv.list<M>({ prefix, cursor });
    keys.push(...page.keys);
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
  return keys;
}
