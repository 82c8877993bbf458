/**
 * What a tenant's TenantGuard reaches beyond its own SQLite, handed to the parts
 * that need it: in the Durable Object the runtime's (tenant-guard.ts), on Node
 * stand-ins (scripts/sim/tenant-io.ts), so a part runs alone with injected time.
 */
import type { BrokerPush } from '../../metering/lease-protocol';
import type { KeyRing } from '../../tenants/crypto';
import type { TokenEntry } from '../../tenants/token-store';
import type { UsageAggregate } from '../../types/billing';
import type { NewAuditEntry } from '../audit/audit-log';
import type { FleetHour } from '../fleet/fleet-board';

import type { Clock } from './part';

export type { Clock };

export interface TenantIo {
  /** The tenant this guard is of (the object's name), when known: alerts and reports name it. */
  tenantId: string | null;
  /** The real clock: alarms, sweeps, the hour a usage batch came in. */
  now: Clock;
  /** Makes sure the alarm fires by `at` (real clock). */
  wakeBy(at: number): void;
  /** The tenant's figures by hour, to its fleet board (objects/fleet/). */
  reportToFleet(tenantId: string, hours: FleetHour[], now: number): Promise<void>;
  /** The `KEY_ENCRYPTION_KEY` ring: sealing webhook secrets, platform keys. */
  keyRing(): Promise<KeyRing>;
  /** One entry into the AuditLog (objects/audit/). */
  audit(entry: NewAuditEntry): Promise<void>;
  /** The tenant's token records in KV, which only its guard writes (tenants/token-store.ts). */
  tokenRecords: {
    /** Those KV held before this guard decided them (read once, to adopt them). */
    stored(tenantId: string): Promise<TokenEntry[]>;
    write(entry: TokenEntry): Promise<void>;
    erase(entry: TokenEntry): Promise<void>;
  };
  /** An operator change to one regional broker, by its name (objects/broker/). */
  sendToBroker(name: string, push: BrokerPush): Promise<void>;
  /** KV and the key ring's setting, where the tenant's record and its indexes live. */
  kv: { TENANTS: KVNamespace; KEY_ENCRYPTION_KEY?: string };
  /** Aggregates to the usage export's queue (docs/BILLING.md); rejects when there is none. */
  produceUsage(aggregates: UsageAggregate[]): Promise<void>;
  /** Another tenant's guard, for the cache version of a platform key they share. */
  otherGuard(tenantId: string): {
    cacheVersion(): Promise<string | null>;
    setCacheVersion(version: string): Promise<void>;
  };
}
