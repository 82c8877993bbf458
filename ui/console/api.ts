/** The operator API as the console calls it (docs/OPERATING.md), typed by the server's own wire types. */
import type {
  AlertSet,
  AlertSettings,
  AlertTest,
  Analytics,
  AuditPage,
  CreatedTenant,
  IssuedToken,
  KeyCheck,
  Limits,
  Operations,
  Overview,
  Plan,
  PortalLink,
  PublicTenant,
  RecentAlert,
  RecentRequestPage,
  RevokedToken,
  RotatedToken,
  TenantPage,
  TenantUsage,
  TokenLimits,
  TokenListing,
  Whoami,
} from '../../src/types/wire';
import { call } from '../lib/api';

const T = (id: string) => `/admin/tenants/${encodeURIComponent(id)}`;
const qs = (params: Record<string, string | number | undefined>) => {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') s.set(k, String(v));
  const text = s.toString();
  return text ? `?${text}` : '';
};

export const api = {
  whoami: () => call<Whoami>('/admin/whoami'),
  operations: () => call<Operations>('/admin/operations'),
  tenants: (p: { q?: string; cursor?: string; page_size: number }) =>
    call<TenantPage>(`/admin/tenants${qs(p)}`),
  tenant: (id: string) => call<PublicTenant>(T(id)),
  createTenant: (body: {
    name: string;
    platform_key: string;
    cors_origins: string[];
    token: { name: string; scopes: string[] };
    plan?: string;
  }) =>
    call<CreatedTenant>('/admin/tenants', {
      method: 'POST',
      body,
    }),
  updateTenant: (
    id: string,
    body: { name?: string; platform_key?: string; cors_origins?: string[]; plan?: string | null },
  ) => call<PublicTenant>(T(id), { method: 'PATCH', body }),
  setStatus: (id: string, action: 'disable' | 'enable') =>
    call<PublicTenant>(`${T(id)}/${action}`, { method: 'POST' }),
  deleteTenant: (id: string) => call<unknown>(T(id), { method: 'DELETE' }),
  tokens: (id: string) => call<{ tokens: TokenListing[] }>(`${T(id)}/tokens`),
  issueToken: (
    id: string,
    body: { name: string; scopes: string[]; expires_at?: string; limits?: TokenLimits },
  ) => call<IssuedToken>(`${T(id)}/tokens`, { method: 'POST', body }),
  rotateToken: (id: string, tokenId: string, overlap_s: number) =>
    call<RotatedToken>(`${T(id)}/tokens/${encodeURIComponent(tokenId)}/rotate`, {
      method: 'POST',
      body: { overlap_s },
    }),
  portalLink: (id: string, expires_in_s: number) =>
    call<PortalLink>(`${T(id)}/portal-links`, {
      method: 'POST',
      body: { expires_in_s },
    }),
  revokeToken: (id: string, tokenId: string, withSuccessors = false) =>
    call<RevokedToken>(
      `${T(id)}/tokens/${encodeURIComponent(tokenId)}${qs({ with_successors: withSuccessors ? 'true' : undefined })}`,
      { method: 'DELETE' },
    ),
  setTokenLimits: (id: string, tokenId: string, limits: TokenLimits | null) =>
    call<unknown>(`${T(id)}/tokens/${encodeURIComponent(tokenId)}/limits`, {
      method: limits ? 'PUT' : 'DELETE',
      ...(limits ? { body: limits } : {}),
    }),
  usage: (id: string, tokenId?: string) =>
    call<TenantUsage>(`${T(id)}/usage${qs({ token_id: tokenId })}`),
  setLimits: (id: string, limits: Limits) =>
    call<unknown>(`${T(id)}/limits`, { method: 'PUT', body: limits }),
  resetLimits: (id: string) => call<{ limits: Limits }>(`${T(id)}/limits`, { method: 'DELETE' }),
  analyticsPath: (id: string, p: Record<string, string>) => `${T(id)}/analytics${qs(p)}`,
  analytics: (id: string, p: Record<string, string>) => call<Analytics>(api.analyticsPath(id, p)),
  purge: (id: string) => call<{ tenants: number }>(`${T(id)}/cache/purge`, { method: 'POST' }),
  alerts: (id: string) => call<AlertSettings | null>(`${T(id)}/alerts`),
  setAlerts: (
    id: string,
    body: { url: string; thresholds: number[]; server_error_percent: number },
  ) =>
    call<AlertSet>(`${T(id)}/alerts`, {
      method: 'PUT',
      body,
    }),
  removeAlerts: (id: string) => call<unknown>(`${T(id)}/alerts`, { method: 'DELETE' }),
  testAlert: (id: string) =>
    call<AlertTest>(`${T(id)}/alerts/test`, {
      method: 'POST',
    }),
  overview: () => call<Overview>('/admin/overview'),
  requests: (id: string, p: Record<string, string | undefined>) =>
    call<RecentRequestPage>(`${T(id)}/requests${qs(p)}`),
  recentAlerts: (id: string) => call<{ alerts: RecentAlert[] }>(`${T(id)}/alerts/recent`),
  plans: () => call<{ plans: Plan[] }>('/admin/plans'),
  setPlan: (name: string, limits: Limits) =>
    call<Plan>(`/admin/plans/${encodeURIComponent(name)}`, { method: 'PUT', body: limits }),
  removePlan: (name: string) =>
    call<unknown>(`/admin/plans/${encodeURIComponent(name)}`, { method: 'DELETE' }),
  /** One cheap read with a typed key (never shown back), or with the tenant's stored one. */
  checkKey: (platform_key: string) =>
    call<KeyCheck>('/admin/keys/check', { method: 'POST', body: { platform_key } }),
  checkTenantKey: (id: string) => call<KeyCheck>(`${T(id)}/key/check`, { method: 'POST' }),
  audit: (p: Record<string, string | number | undefined>) =>
    call<AuditPage>(`/admin/audit${qs(p)}`),
};
