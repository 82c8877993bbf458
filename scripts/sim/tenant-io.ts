/**
 * A tenant's guard with nowhere to reach (src/objects/tenant/io.ts), for what runs its
 * parts on Node: the simulation and the unit tests next to the source. `now` is their
 * clock; `io` replaces what a test watches.
 */
import type { Clock, TenantIo } from '../../src/objects/tenant/io';

export function detachedIo(now: Clock = () => Date.now(), io: Partial<TenantIo> = {}): TenantIo {
  return {
    tenantId: null,
    now,
    wakeBy: () => undefined,
    reportToFleet: async () => undefined,
    keyRing: () => Promise.reject(new Error('no key ring here')),
    audit: async () => undefined,
    tokenRecords: {
      stored: async () => [],
      write: async () => undefined,
      erase: async () => undefined,
    },
    sendToBroker: async () => undefined,
    // No KV on Node: a call to it fails.
    kv: { TENANTS: {} as KVNamespace },
    otherGuard: () => ({
      cacheVersion: async () => null,
      setCacheVersion: async () => undefined,
    }),
    ...io,
  };
}
