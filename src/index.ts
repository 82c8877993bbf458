/** Worker entry: the gateway app, the CONNECT refusal, and the Durable Object classes. */
import { newApp } from './app';
import { refuseTunnel } from './connect';
import type { Bindings } from './types/context';

export { AuditLog } from './audit/log';
export { LeaseBroker } from './guard/lease-broker';
export { TenantGuard } from './guard/tenant-guard';

const app = newApp();

export default {
  fetch: app.fetch,
  connect: refuseTunnel,
} satisfies ExportedHandler<Bindings>;
