/**
 * Admission as a request sees it: the request's way to its tenant's
 * TenantGuard (the AdmissionIo of admission.ts), the lease settings its
 * Settings make, and usage recording's entry point, which the request log
 * calls once the response is made. Middleware, streams and the request log
 * use these; none of them builds the guard calls itself.
 */
import type { Context } from 'hono';
import { brokerFor } from '../objects/broker/lease-broker';
import { guardFor } from '../objects/tenant/tenant-guard';
import { catalogOf } from '../routes/catalog';
import { count } from '../stats';
import type { HonoEnv } from '../types/context';
import type { Settings } from '../types/settings';
import { type AdmissionIo, isolateAdmission } from './admission';
import type { LeaseSettings } from './lease';
import { DIRECT_FOR_MS, regionOf, shardOf } from './region';
import type { UsageEntry } from './usage-buffer';

/**
 * What each tenant's brokers last advised this isolate (objects/broker/broker-shards.ts,
 * objects/broker/lease-broker.ts): how many brokers its region is spread over, and until when
 * to ask the root directly (a tenant too small to pool). Per isolate, one entry a
 * tenant; past MAX_ADVICE_ENTRIES the oldest advice is forgotten, never everyone's.
 */
interface BrokerAdvice {
  shards: number;
  directUntil: number;
}
const brokerAdvice = new Map<string, BrokerAdvice>();
const MAX_ADVICE_ENTRIES = 10_000;

function advise(tenantId: string, change: Partial<BrokerAdvice>): void {
  const current = brokerAdvice.get(tenantId) ?? { shards: 1, directUntil: 0 };
  brokerAdvice.delete(tenantId);
  if (brokerAdvice.size >= MAX_ADVICE_ENTRIES) {
    const oldest = brokerAdvice.keys().next().value;
    if (oldest !== undefined) brokerAdvice.delete(oldest);
  }
  brokerAdvice.set(tenantId, { ...current, ...change });
}

/**
 * How this request reaches its tenant's TenantGuard, for admission.ts: through its
 * region's broker, or `direct` (self-service reads) to the TenantGuard itself.
 * `tenantId`: the request's tenant (default: the authenticated one).
 */
export function admissionIo(
  c: Context<HonoEnv>,
  opts: { direct?: boolean; tenantId?: string } = {},
): AdmissionIo {
  const tenantId = opts.tenantId ?? c.get('tenant').id;
  const settings = c.get('settings');
  return {
    acquire: async (req) => {
      count('guard_calls');
      // Worked out only when a call is made: most requests are admitted from the lease.
      const region = settings.LEASE_BROKERS && !opts.direct ? regionOf(c.req.raw.cf) : null;
      const advice = brokerAdvice.get(tenantId);
      if (!region || (advice && advice.directUntil > req.now)) {
        return guardFor(c.env, tenantId).limits().acquire(req);
      }
      const shards = advice?.shards ?? 1;
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
        advise(tenantId, { shards: answer.spread });
      }
      if (answer.direct) advise(tenantId, { directUntil: req.now + DIRECT_FOR_MS });
      return answer;
    },
    record: (batch, retentionDays, returns) => {
      count('guard_calls');
      return guardFor(c.env, tenantId).limits().record(batch, retentionDays, returns);
    },
    ...(settings.USAGE_FLUSH_TIMER
      ? { later: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)) }
      : {}),
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
        largestCost: catalogOf(settings).largestCost,
        selfServicePerMinute: settings.SELF_SERVICE_PER_MINUTE,
      },
    };
    leaseSettingsFor.set(settings, ls);
  }
  return ls;
}

/**
 * Adds a finished request of a known tenant to its usage history, when limits
 * and USAGE_HISTORY are on: gathered here, handed to the guard with the next
 * lease call, or on its own within USAGE_FLUSH_MS (admission.ts, recordUsage).
 * The tenant is the one its token names, also when the request was refused
 * before admission (a revoked token, a missing scope, an unknown path).
 */
export function recordRequestUsage(c: Context<HonoEnv>, tenantId: string, entry: UsageEntry): void {
  const settings = c.get('settings');
  if (!settings.LIMITS_ENABLED || !settings.USAGE_HISTORY) return;
  const io = admissionIo(c, { tenantId });
  isolateAdmission.recordUsage(tenantId, entry, leaseSettings(settings), io);
}
