/**
 * What a tenant's guard reaches (src/objects/tenant/io.ts), nowhere, for what runs its
 * parts on Node: the simulation and the unit tests next to the source. `now` is their
 * clock; `io` replaces what a test watches.
 */
import type { BrokerPush } from '../../src/metering/lease-protocol';
import type { Limits } from '../../src/metering/policy';
import type { Clock, TenantIo } from '../../src/objects/tenant/io';
import { TenantParts } from '../../src/objects/tenant/parts';
import { memorySql } from './sqlite';

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
    produceUsage: async () => undefined,
    // No KV on Node: a call to it fails.
    kv: { TENANTS: {} as KVNamespace },
    otherGuard: () => ({
      cacheVersion: async () => null,
      setCacheVersion: async () => undefined,
    }),
    ...io,
  };
}

/**
 * A tenant's guard on node:sqlite with nowhere to reach, on its own `limits`: the root
 * of the simulation and of the unit tests of brokers and leases.
 */
export function detachedGuard(limits?: Limits, io: TenantIo = detachedIo()): TenantParts {
  const guard = new TenantParts(memorySql(), io);
  // No broker to tell: the limits hold once this returns.
  if (limits) void guard.limits.setLimits(limits, limits);
  return guard;
}

/**
 * An operator's revocation at the root, as the tokens part decides it (of a token the
 * simulation never issued): what the guard then pushes to its brokers.
 */
export function revokeAt(guard: TenantParts, tokenId: string, now: number): BrokerPush {
  guard.tokenStanding.revoke(tokenId, now);
  return guard.tokenStanding.pushOf(tokenId);
}
