/**
 * Lease memory per isolate: one Admission (src/limits/admission.ts) holding a
 * lease for each of `tenants` tenants, each answered once by a tenant's guard, as
 * an isolate that has served every one of them lately would. The heap is
 * measured after a full garbage collection, before and after.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Admission, type AdmissionIo } from '../../src/limits/admission';
import type { LeaseSettings } from '../../src/limits/lease';
import type { Limits } from '../../src/metering/policy';
import { detachedGuard } from './tenant-io';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

export async function leaseBytesPerTenant(tenants: number): Promise<number> {
  const limits: Limits = {
    policies: [{ name: 'per-minute', limit: 1_000_000_000, window_s: 60 }],
    quota: { daily: 1_000_000_000 },
  };
  const settings: LeaseSettings = {
    leaseMaxMs: 1000,
    defaults: limits,
    meterOptions: { partitionShare: 1, largestCost: 1 },
    usageRetentionDays: 90,
  };
  const root = detachedGuard().limits;
  let now = Date.UTC(2026, 10, 24);
  const io: AdmissionIo = {
    acquire: async (req) => root.acquire(req),
    record: async () => undefined,
    waitUntil: () => undefined,
    now: () => now,
  };
  const admission = new Admission();
  gc();
  const before = process.memoryUsage().heapUsed;
  for (let i = 0; i < tenants; i++) {
    now += 1;
    // Two requests each: the second leases, as a tenant with some traffic does.
    for (let n = 0; n < 2; n++) {
      await admission.admit(`ten_${i}`, { group: 'teams', tokenId: `tok_${i}` }, 1, settings, io);
    }
  }
  gc();
  const after = process.memoryUsage().heapUsed;
  if (admission.size !== tenants) throw new Error(`held ${admission.size} of ${tenants} tenants`);
  return (after - before) / tenants;
}
