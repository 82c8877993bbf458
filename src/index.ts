/** Worker entry: the gateway app, the CONNECT refusal, the operator entrypoint and the Durable Object classes. */
import { newApp } from './app';
import { refuseTunnel } from './connect';
import { operatorEntrypoint } from './operator-entrypoint';
import type { Bindings } from './types/context';

export { AuditLog } from './audit/audit-log';
export { ConfigBook } from './guard/config-book';
export { FleetBoard } from './guard/fleet-board';
export { LeaseBroker } from './guard/lease-broker';
export { PlanBook } from './guard/plan-book';
export { TenantGuard } from './guard/tenant-guard';

const app = newApp();

/** The console Worker's Service Binding target (docs/DEPLOY.md). */
export const OperatorApi = operatorEntrypoint(app);

export default {
  fetch: app.fetch,
  connect: refuseTunnel,
} satisfies ExportedHandler<Bindings>;
