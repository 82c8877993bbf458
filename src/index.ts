/**
 * Worker entry: the gateway app, the CONNECT refusal, the usage export's queue consumer,
 * the operator entrypoint and the Durable Object classes.
 */
import { newApp } from './app';
import { consumeUsage } from './billing/consumer';
import { refuseTunnel } from './connect';
import { operatorEntrypoint } from './operator-entrypoint';
import type { UsageMessage } from './types/billing';
import type { Bindings } from './types/context';

export { AuditLog } from './objects/audit/audit-log';
export { LeaseBroker } from './objects/broker/lease-broker';
export { OAuthClients } from './objects/clients/oauth-clients';
export { ConfigBook } from './objects/config/config-book';
export { FleetBoard } from './objects/fleet/fleet-board';
export { PlanBook } from './objects/plans/plan-book';
export { TenantGuard } from './objects/tenant/tenant-guard';

const app = newApp();

/** The console Worker's Service Binding target (docs/DEPLOY.md). */
export const OperatorApi = operatorEntrypoint(app);

export default {
  fetch: app.fetch,
  connect: refuseTunnel,
  // The usage export: delivers usage-events to the sink, archives dead letters (docs/BILLING.md).
  queue: consumeUsage,
} satisfies ExportedHandler<Bindings, UsageMessage>;
