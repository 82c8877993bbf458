/** The Worker's bindings and the per-request variables, in one typed Hono env. */
import type { RequestIdVariables } from 'hono/request-id';
import type { AuditLog } from './audit/log';
import type { TenantGuard } from './limits/guard';
import type { Settings } from './settings';
import type { Tenant, TokenRecord } from './tenants/types';

export interface Bindings {
  /** Tenant and token records (docs/STORAGE.md). */
  TENANTS: KVNamespace;
  /** One TenantGuard per tenant: limits, quotas, revocation (docs/STORAGE.md). */
  TENANT_GUARD: DurableObjectNamespace<TenantGuard>;
  /** The operator audit log (docs/STORAGE.md). */
  AUDIT_LOG: DurableObjectNamespace<AuditLog>;
  /** Secret: `kid:base64(32 bytes)`, comma-separated; the first seals (tenants/crypto.ts). */
  KEY_ENCRYPTION_KEY?: string;
  PLATFORM_BASE_URL?: string;
  ADMIN_TOKEN?: string;
  UPSTREAM_TIMEOUT_MS?: string;
  PLATFORM_AUTH_SCHEME?: string;
  ROUTE_OVERRIDES?: string | Record<string, unknown>;
  TENANT_MEMO_TTL_MS?: string;
  MAX_BODY_BYTES?: string;
  DEFAULT_LIMITS?: string | Record<string, unknown>;
  LIMITS_ENABLED?: string;
  LIMITER_FAILURE_MODE?: string;
  BROWSER_PARTITION_SHARE?: string;
}

export interface Variables extends RequestIdVariables {
  settings: Settings;
  tenant: Tenant;
  token: TokenRecord;
  /** From the TenantGuard's verdict; part of every cache key (absent = bypass). */
  cacheVersion?: string;
  /** Set for browser tokens: their own rate-limit partition inside the tenant's. */
  partition?: string;
}

export type HonoEnv = { Bindings: Bindings; Variables: Variables };
