/**
 * The LeaseBroker Durable Object: the shell around BrokerCore (broker.ts),
 * one per tenant and region, placed in its region with a location hint. It
 * reaches the tenant's root TenantGuard over a Durable Object call and renews
 * its pool ahead on a timer while isolates keep using it.
 */
import { DurableObject } from 'cloudflare:workers';
import { BrokerCore } from './broker';
import type { LeaseRequest } from './lease-protocol';
import { guardFor } from './tenant-guard';

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

/** A broker's name: its tenant and region. The root pushes changes to it by this name. */
export function brokerName(tenantId: string, region: BrokerRegion): string {
  return `${tenantId}@${region}`;
}

/** The broker of a tenant in a region, placed there. */
export function brokerFor(
  env: { LEASE_BROKER: DurableObjectNamespace<LeaseBroker> },
  tenantId: string,
  region: BrokerRegion,
) {
  const ns = env.LEASE_BROKER;
  return ns.get(ns.idFromName(brokerName(tenantId, region)), { locationHint: region });
}

export class LeaseBroker extends DurableObject<Cloudflare.Env> {
  private core: BrokerCore | null = null;
  /**
   * The renewal timer. A timer, not the storage alarm: a broker keeps nothing
   * worth storing, renews every few seconds (an alarm would be a storage
   * write each time), and one evicted while idle simply starts cold.
   */
  private timer: ReturnType<typeof setTimeout> | undefined;

  /** An isolate's lease call, exactly as it would make it to the root. */
  acquire(tenantId: string, region: BrokerRegion, leaseMs: number, req: LeaseRequest) {
    return this.coreFor(tenantId, region, leaseMs).acquire(req);
  }

  /** The root's push after an operator change: drop what is known and ask again. */
  forget(): void {
    this.core?.forget();
  }

  private wakeAt(at: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.renew(), Math.max(0, at - Date.now()));
  }

  private async renew(): Promise<void> {
    const next = (await this.core?.renew()) ?? null;
    if (next !== null) this.wakeAt(next);
  }

  private coreFor(tenantId: string, region: BrokerRegion, leaseMs: number): BrokerCore {
    if (!this.core) {
      const name = brokerName(tenantId, region);
      this.core = new BrokerCore(
        { name, leaseMs },
        {
          acquire: (req) => guardFor(this.env, tenantId).acquire(req),
          now: () => Date.now(),
          wakeAt: (at) => this.wakeAt(at),
        },
      );
    }
    return this.core;
  }
}
