/** The operator API as the console calls it (docs/OPERATING.md), typed. */
import { call } from '../lib/api';

export interface Whoami {
  actor: string;
  role: 'admin' | 'viewer';
  via: string;
}

export interface TenantRow {
  id: string;
  name: string;
  status: 'active' | 'disabled';
  key_fingerprint: string | null;
  created_at: string;
  updated_at: string;
}

export interface Tenant extends TenantRow {
  cors_origins: string[];
}

export interface RatePolicy {
  name: string;
  limit: number;
  window_s: number;
  algorithm?: 'sliding' | 'fixed';
}

export interface Quota {
  daily?: number;
  monthly?: number;
}

export interface Limits {
  policies: RatePolicy[];
  quota: Quota & { groups?: Record<string, Quota> };
  limiter?: 'leased' | 'exact';
}

export interface TokenLimits {
  policies: RatePolicy[];
  quota: Quota;
}

export interface TokenRow {
  id: string;
  name: string;
  prefix: string;
  last4: string;
  scopes: string[];
  created_at: string;
  expires_at: string | null;
  revoked_at?: string;
  limits: TokenLimits | null;
  /** The first token of its rotation line (itself when never rotated). */
  family_id: string;
  ancestor_id: string | null;
  successor_id: string | null;
  /** When and by whom this token was rotated into its successor. */
  rotated_at: string | null;
  rotated_by: string | null;
}

export interface Meter {
  name: string;
  kind: 'rate' | 'quota';
  limit: number;
  window_s: number;
  used: number;
  remaining: number;
  reset_s: number;
}

export interface Usage {
  limits: Limits;
  custom: boolean;
  meters: Meter[];
}

export interface SeriesPoint {
  t: string;
  route?: string;
  status?: string;
  token?: string;
  requests: number;
  units: number;
  p50_ms: number | null;
  p95_ms: number | null;
  /** Reads of cached routes answered from the read cache, and those that looked. */
  cache_hits?: number;
  cache_lookups?: number;
}

export interface Analytics {
  from: string;
  to: string;
  granularity: 'hour' | 'day';
  series: SeriesPoint[];
  refusals: { t: string; policy: string; token?: string; count: number }[];
}

export interface AuditEntry {
  id: number;
  at: string;
  action: string;
  tenant_id: string | null;
  token_id: string | null;
  request_id: string;
  actor: string;
  ip: string | null;
  colo: string | null;
  detail: Record<string, unknown>;
}

export interface AuditPage {
  page_num: number;
  total: number;
  total_page: number;
  data: AuditEntry[];
}

const T = (id: string) => `/admin/tenants/${encodeURIComponent(id)}`;
const qs = (params: Record<string, string | number | undefined>) => {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') s.set(k, String(v));
  const text = s.toString();
  return text ? `?${text}` : '';
};

/** GET /admin/operations: what the gateway serves, and the scopes and presets it grants. */
export interface Operations {
  operations: { id: string; method: string; path: string; group: string; scope: string }[];
  groups: string[];
  scopes: string[];
  presets: string[];
}

export const api = {
  whoami: () => call<Whoami>('/admin/whoami'),
  operations: () => call<Operations>('/admin/operations'),
  tenants: (p: { q?: string; cursor?: string; page_size: number }) =>
    call<{ tenants: TenantRow[]; cursor: string | null }>(`/admin/tenants${qs(p)}`),
  tenant: (id: string) => call<Tenant>(T(id)),
  createTenant: (body: {
    name: string;
    platform_key: string;
    cors_origins: string[];
    token: { name: string; scopes: string[] };
  }) =>
    call<{ tenant_id: string; token_id: string; token: string }>('/admin/tenants', {
      method: 'POST',
      body,
    }),
  updateTenant: (
    id: string,
    body: { name?: string; platform_key?: string; cors_origins?: string[] },
  ) => call<Tenant>(T(id), { method: 'PATCH', body }),
  setStatus: (id: string, action: 'disable' | 'enable') =>
    call<Tenant>(`${T(id)}/${action}`, { method: 'POST' }),
  deleteTenant: (id: string) => call<unknown>(T(id), { method: 'DELETE' }),
  tokens: (id: string) => call<{ tokens: TokenRow[] }>(`${T(id)}/tokens`),
  issueToken: (
    id: string,
    body: { name: string; scopes: string[]; expires_at?: string; limits?: TokenLimits },
  ) => call<TokenRow & { token: string }>(`${T(id)}/tokens`, { method: 'POST', body }),
  rotateToken: (id: string, tokenId: string, overlap_s: number) =>
    call<TokenRow & { token: string; old_token: { id: string; expires_at: string } }>(
      `${T(id)}/tokens/${encodeURIComponent(tokenId)}/rotate`,
      { method: 'POST', body: { overlap_s } },
    ),
  portalLink: (id: string, expires_in_s: number) =>
    call<{ url: string; token_id: string; expires_at: string }>(`${T(id)}/portal-links`, {
      method: 'POST',
      body: { expires_in_s },
    }),
  revokeToken: (id: string, tokenId: string, withSuccessors = false) =>
    call<{ successors_revoked: string[] }>(
      `${T(id)}/tokens/${encodeURIComponent(tokenId)}${qs({ with_successors: withSuccessors ? 'true' : undefined })}`,
      { method: 'DELETE' },
    ),
  setTokenLimits: (id: string, tokenId: string, limits: TokenLimits | null) =>
    call<unknown>(`${T(id)}/tokens/${encodeURIComponent(tokenId)}/limits`, {
      method: limits ? 'PUT' : 'DELETE',
      ...(limits ? { body: limits } : {}),
    }),
  usage: (id: string, tokenId?: string) =>
    call<Usage>(`${T(id)}/usage${qs({ token_id: tokenId })}`),
  setLimits: (id: string, limits: Limits) =>
    call<unknown>(`${T(id)}/limits`, { method: 'PUT', body: limits }),
  resetLimits: (id: string) => call<unknown>(`${T(id)}/limits`, { method: 'DELETE' }),
  analyticsPath: (id: string, p: Record<string, string>) => `${T(id)}/analytics${qs(p)}`,
  analytics: (id: string, p: Record<string, string>) => call<Analytics>(api.analyticsPath(id, p)),
  purge: (id: string) => call<{ tenants: number }>(`${T(id)}/cache/purge`, { method: 'POST' }),
  alerts: (id: string) => call<{ url: string; thresholds: number[] } | null>(`${T(id)}/alerts`),
  setAlerts: (id: string, body: { url: string; thresholds: number[] }) =>
    call<{ url: string; thresholds: number[]; secret: string }>(`${T(id)}/alerts`, {
      method: 'PUT',
      body,
    }),
  removeAlerts: (id: string) => call<unknown>(`${T(id)}/alerts`, { method: 'DELETE' }),
  testAlert: (id: string) =>
    call<{ delivered: boolean; status: number | null }>(`${T(id)}/alerts/test`, {
      method: 'POST',
    }),
  audit: (p: Record<string, string | number | undefined>) =>
    call<AuditPage>(`/admin/audit${qs(p)}`),
};
