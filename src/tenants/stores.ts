/**
 * The two ways to open the KV stores. The hot path reads through a
 * per-isolate memo (TENANT_MEMO_TTL_MS); the operator API reads KV directly,
 * since it must see its own writes.
 */
import type { Settings } from '../types/settings';
import { keyRing } from './crypto';
import { KeyIndex, OriginIndex } from './indexes';
import { TenantStore } from './tenant-store';
import { TokenStore } from './token-store';

export interface Stores {
  tenants: TenantStore;
  tokens: TokenStore;
  keys: KeyIndex;
  origins: OriginIndex;
}

type StoreSettings = Pick<Settings, 'KEY_ENCRYPTION_KEY' | 'TENANT_MEMO_TTL_MS'>;

async function openStores(
  kv: KVNamespace,
  settings: StoreSettings,
  memoTtlMs: number,
): Promise<Stores> {
  const keys = new KeyIndex(kv);
  const origins = new OriginIndex(kv, memoTtlMs);
  const ring = await keyRing(settings.KEY_ENCRYPTION_KEY);
  return {
    tenants: new TenantStore(kv, ring, keys, origins, memoTtlMs),
    tokens: new TokenStore(kv, ring, memoTtlMs),
    keys,
    origins,
  };
}

// Settings are parsed once per env, so stores are opened once per env too, not per request.
const memoized = new WeakMap<StoreSettings, Promise<Stores>>();
const direct = new WeakMap<StoreSettings, Promise<Stores>>();

function cached(
  opened: WeakMap<StoreSettings, Promise<Stores>>,
  kv: KVNamespace,
  settings: StoreSettings,
  memoTtlMs: number,
): Promise<Stores> {
  let stores = opened.get(settings);
  if (!stores) {
    stores = openStores(kv, settings, memoTtlMs);
    opened.set(settings, stores);
  }
  return stores;
}

/** For requests: memoized reads. */
export function memoizedStores(
  env: { TENANTS: KVNamespace },
  settings: StoreSettings,
): Promise<Stores> {
  return cached(memoized, env.TENANTS, settings, settings.TENANT_MEMO_TTL_MS);
}

/** For the operator API: every read goes to KV. */
export function directStores(
  env: { TENANTS: KVNamespace },
  settings: StoreSettings,
): Promise<Stores> {
  return cached(direct, env.TENANTS, settings, 0);
}
