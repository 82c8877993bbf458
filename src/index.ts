/** Worker entry: the gateway app and its Durable Object classes. */
import { newApp } from './app';

export { AuditLog } from './audit/log';
export { TenantGuard } from './limits/guard';
export default newApp();
