/**
 * The LeaseBroker Durable Object: the shell around BrokerCore (broker.ts),
 * one per tenant and region, placed in its region with a location hint. It
 * reaches the tenant's root TenantGuard over a Durable Object call and renews
 * its pool ahead from its alarm while isolates keep using it.
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

  /** An isolate's lease call, exactly as it would make it to the root. */
  acquire(tenantId: string, region: BrokerRegion, leaseMs: number, req: LeaseRequest) {
    return this.coreFor(tenantId, region, leaseMs).acquire(req);
  }

  /** The root's push after an operator change: drop what is known and ask again. */
  forget(): void {
    this.core?.forget();
  }

  override async alarm(): Promise<void> {
    const next = await this.core?.renew();
    if (next !== null && next !== undefined) await this.ctx.storage.setAlarm(next);
  }

  private coreFor(tenantId: string, region: BrokerRegion, leaseMs: number): BrokerCore {
    if (!this.core) {
      const name = brokerName(tenantId, region);
      this.core = new BrokerCore(
        { name, leaseMs },
        {
          acquire: (req) => guardFor(this.env, tenantId).acquire(req),
          now: () => Date.now(),
          wakeAt: (at) => {
            this.ctx.storage.setAlarm(at).catch(() => {
              // No alarm: the next isolate call renews instead.
            });
          },
        },
      );
    }
    return this.core;
  }
}
