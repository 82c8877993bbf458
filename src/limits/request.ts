/**
 * Admission as a request sees it: the request's way to its tenant's
 * TenantGuard (the AdmissionIo of admission.ts), the lease settings its
 * Settings make, and usage recording's entry point, which the request log
 * calls once the response is made. Middleware, streams and the request log
 * use these; none of them builds the guard calls itself.
 */
import type { Context } from 'hono';
import { shardOf } from '../guard/broker-shards';
import type { LeaseSettings } from '../guard/lease';
import { brokerFor } from '../guard/lease-broker';
import { guardFor } from '../guard/tenant-guard';
import type { UsageEntry } from '../guard/usage';
import { largestRouteCost } from '../routes/overrides';
import { count } from '../stats';
import type { HonoEnv } from '../types/context';
import type { Settings } from '../types/settings';
import { type AdmissionIo, isolateAdmission } from './admission';
import { regionOf } from './region';

/**
 * How many brokers each tenant's region is spread over, as its brokers last advised
 * (guard/broker-shards.ts). Per isolate; forgotten whole past MAX_SPREAD_ENTRIES.
 */
const brokerShards = new Map<string, number>();
const MAX_SPREAD_ENTRIES = 10_000;

/** How this request reaches its tenant's TenantGuard, for admission.ts. */
export function admissionIo(c: Context<HonoEnv>): AdmissionIo {
  const tenantId = c.get('tenant').id;
  const settings = c.get('settings');
  const region = settings.LEASE_BROKERS ? regionOf(c.req.raw.cf) : null;
  return {
    acquire: async (req) => {
      count('guard_calls');
      if (!region) return guardFor(c.env, tenantId).acquire(req);
      const shards = brokerShards.get(tenantId) ?? 1;
      const colo = c.req.raw.cf?.colo;
      const place = { region, shard: shardOf(typeof colo === 'string' ? colo : '', shards) };
      const answer = await brokerFor(c.env, tenantId, place).acquire(
        tenantId,
        place,
        shards,
        settings.BROKER_LEASE_MS,
        req,
      );
      if (answer.spread !== undefined && answer.spread > shards) {
        if (brokerShards.size >= MAX_SPREAD_ENTRIES) brokerShards.clear();
        brokerShards.set(tenantId, answer.spread);
      }
      return answer;
    },
    record: (batch, retentionDays) => {
      count('guard_calls');
      return guardFor(c.env, tenantId).record(batch, retentionDays);
    },
    waitUntil: (p) => c.executionCtx.waitUntil(p),
    now: () => Date.now(),
  };
}

// Lease settings change only with the settings object (parsed once per env).
const leaseSettingsFor = new WeakMap<Settings, LeaseSettings>();

export function leaseSettings(settings: Settings): LeaseSettings {
  let ls = leaseSettingsFor.get(settings);
  if (!ls) {
    ls = {
      leaseMaxMs: settings.LEASE_MAX_MS,
      defaults: settings.DEFAULT_LIMITS,
      usageRetentionDays: settings.USAGE_RETENTION_DAYS,
      meterOptions: {
        partitionShare: settings.BROWSER_PARTITION_SHARE,
        largestCost: largestRouteCost(settings.ROUTE_OVERRIDES),
      },
    };
    leaseSettingsFor.set(settings, ls);
  }
  return ls;
}

/**
 * Adds a finished request of a known tenant to its usage history, when limits
 * and USAGE_HISTORY are on: gathered here, handed to the guard with the next
 * lease call (admission.ts, recordUsage).
 */
export function recordRequestUsage(c: Context<HonoEnv>, entry: UsageEntry): void {
  const settings = c.get('settings');
  const tenant = c.get('tenant');
  if (!tenant || !settings.LIMITS_ENABLED || !settings.USAGE_HISTORY) return;
  isolateAdmission.recordUsage(tenant.id, entry, leaseSettings(settings), admissionIo(c));
}
