/**
 * The LeaseBroker Durable Object: the shell around BrokerCore (broker.ts),
 * one per tenant and region (and shard, once a hot tenant's brokers split),
 * placed in its region with a location hint. It
 * reaches the tenant's root TenantGuard over a Durable Object call and renews
 * its pool ahead on a timer while isolates keep using it.
 */
import { DurableObject } from 'cloudflare:workers';
import type { BrokerPush, LeaseAnswer, LeaseRequest } from '../../metering/lease-protocol';
import { guardFor } from '../tenant/tenant-guard';
import { BrokerCore } from './broker';
import { spreadAdvice } from './broker-shards';

/** Cloudflare's Durable Object location hints: the regions brokers live in. */
export const BROKER_REGIONS = [
  'wnam',
  'enam',
  'sam',
  'weur',
  'eeur',
  'apac',
  'oc',
  'afr',
  'me',
] as const;
export type BrokerRegion = (typeof BROKER_REGIONS)[number];

/** Where a broker serves: its region and, once its tenant's brokers split, its shard (broker-shards.ts). */
export interface BrokerPlace {
  region: BrokerRegion;
  shard: number;
}

/** A broker's name: its tenant, region and shard. The root pushes changes to it by this name. */
export function brokerName(tenantId: string, place: BrokerPlace): string {
  return place.shard === 0
    ? `${tenantId}@${place.region}`
    : `${tenantId}@${place.region}.${place.shard}`;
}

/** The broker of a tenant in a region (and shard), placed in that region. */
export function brokerFor(
  env: { LEASE_BROKER: DurableObjectNamespace<LeaseBroker> },
  tenantId: string,
  place: BrokerPlace,
) {
  const ns = env.LEASE_BROKER;
  return ns.get(ns.idFromName(brokerName(tenantId, place)), { locationHint: place.region });
}

/**
 * A broker's answer: the root's kind of answer; when it is hot, how many shards to use;
 * and `direct` when the broker only passes calls on (exact mode, meters too small to
 * pool), so its isolates ask the root themselves for a while instead of paying for
 * the extra hop.
 */
export type BrokerAnswer = LeaseAnswer & { spread?: number; direct?: true };

export class LeaseBroker extends DurableObject<Cloudflare.Env> {
  private core: BrokerCore | null = null;
  /**
   * The renewal timer. A timer, not the storage alarm: a broker keeps nothing
   * worth storing, renews every few seconds (an alarm would be a storage
   * write each time), and one evicted while idle simply starts cold.
   */
  private timer: ReturnType<typeof setTimeout> | undefined;

  /**
   * An isolate's lease call, exactly as it would make it to the root; `shards` is how
   * many brokers the isolate spreads its tenant's region over now.
   */
  async acquire(
    tenantId: string,
    place: BrokerPlace,
    shards: number,
    leaseMs: number,
    req: LeaseRequest,
  ): Promise<BrokerAnswer> {
    const core = this.coreFor(tenantId, place, leaseMs);
    const answer: BrokerAnswer = await core.acquire(req);
    const spread = spreadAdvice(core.callsPerSecond(), shards);
    if (spread !== undefined) answer.spread = spread;
    if (core.onlyPassesOn()) answer.direct = true;
    return answer;
  }

  /** The root's push after an operator change (metering/lease-protocol.ts, BrokerPush). */
  apply(change: BrokerPush): void {
    this.core?.apply(change);
  }

  private wakeAt(at: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.renew(), Math.max(0, at - Date.now()));
  }

  private async renew(): Promise<void> {
    const next = (await this.core?.renew()) ?? null;
    if (next !== null) this.wakeAt(next);
  }

  private coreFor(tenantId: string, place: BrokerPlace, leaseMs: number): BrokerCore {
    if (!this.core) {
      const name = brokerName(tenantId, place);
      this.core = new BrokerCore(
        { name, leaseMs },
        {
          acquire: (req) => guardFor(this.env, tenantId).limits().acquire(req),
          now: () => Date.now(),
          wakeAt: (at) => this.wakeAt(at),
        },
      );
    }
    return this.core;
  }
}
