/**
 * The operator API as the console calls it (docs/OPERATING.md): through the client typed
 * from the operations' definitions (ui/lib/admin-client.ts), so tsc checks every path,
 * parameter, body and answer here against the server. No path or body shape is written
 * here by hand: a route is named as properties, bodies and answers are the definitions'.
 */

import type { Limits, TokenLimits } from '../../src/types/wire';
import { adminClient, type BodyOf, type QueryOf, segments } from '../lib/admin-client';
import { dataOf, FETCH_INIT } from '../lib/api';

const admin = adminClient(location.origin, {
  headers: { accept: 'application/json' },
  init: FETCH_INIT,
});
const tenant = admin.tenants[':id'];
const token = tenant.tokens[':token_id'];
const plan = admin.plans[':name'];
const at = (id: string) => ({ param: segments({ id }) });
const atToken = (id: string, tokenId: string) => ({
  param: segments({ id, token_id: tokenId }),
});

export const api = {
  whoami: () => dataOf(admin.whoami.$get()),
  operations: () => dataOf(admin.operations.$get()),
  tenants: (p: { q?: string | undefined; cursor?: string | undefined; page_size: number }) =>
    dataOf(admin.tenants.$get({ query: { ...p, page_size: String(p.page_size) } })),
  tenant: (id: string) => dataOf(tenant.$get(at(id))),
  createTenant: (json: BodyOf<'createTenant'>) => dataOf(admin.tenants.$post({ json })),
  updateTenant: (id: string, json: BodyOf<'updateTenant'>) =>
    dataOf(tenant.$patch({ ...at(id), json })),
  setStatus: (id: string, action: 'disable' | 'enable') => dataOf(tenant[action].$post(at(id))),
  deleteTenant: (id: string) => dataOf(tenant.$delete(at(id))),
  tokens: (id: string) => dataOf(tenant.tokens.$get(at(id))),
  issueToken: (id: string, json: BodyOf<'issueToken'>) =>
    dataOf(tenant.tokens.$post({ ...at(id), json })),
  rotateToken: (id: string, tokenId: string, overlap_s: number) =>
    dataOf(token.rotate.$post({ ...atToken(id, tokenId), json: { overlap_s } })),
  portalLink: (id: string, expires_in_s: number, manage: boolean) =>
    dataOf(tenant['portal-links'].$post({ ...at(id), json: { expires_in_s, manage } })),
  partnerAccess: (id: string) => dataOf(tenant['partner-access'].$get(at(id))),
  setPartnerAccess: (id: string, json: BodyOf<'setPartnerAccess'>) =>
    dataOf(tenant['partner-access'].$put({ ...at(id), json })),
  revokeToken: (id: string, tokenId: string, withSuccessors = false) =>
    dataOf(
      token.$delete({
        ...atToken(id, tokenId),
        query: { with_successors: withSuccessors ? 'true' : undefined },
      }),
    ),
  setTokenLimits: (id: string, tokenId: string, limits: TokenLimits | null) =>
    limits
      ? dataOf(token.limits.$put({ ...atToken(id, tokenId), json: limits }))
      : dataOf(token.limits.$delete(atToken(id, tokenId))),
  usage: (id: string, tokenId?: string) =>
    dataOf(tenant.usage.$get({ ...at(id), query: { token_id: tokenId } })),
  setLimits: (id: string, limits: Limits) =>
    dataOf(tenant.limits.$put({ ...at(id), json: limits })),
  resetLimits: (id: string) => dataOf(tenant.limits.$delete(at(id))),
  /** Where the CSV export is read (`Accept: text/csv`): the same operation as analytics. */
  analyticsPath: (id: string, query: QueryOf<'getAnalytics'>) =>
    tenant.analytics.$path({ ...at(id), query }),
  analytics: (id: string, query: QueryOf<'getAnalytics'>) =>
    dataOf(tenant.analytics.$get({ ...at(id), query })),
  purge: (id: string) => dataOf(tenant.cache.purge.$post(at(id))),
  usageExport: (id: string) => dataOf(tenant.usage.export.$get({ ...at(id), query: {} })),
  alerts: (id: string) => dataOf(tenant.alerts.$get(at(id))),
  setAlerts: (id: string, json: BodyOf<'setAlerts'>) =>
    dataOf(tenant.alerts.$put({ ...at(id), json })),
  removeAlerts: (id: string) => dataOf(tenant.alerts.$delete(at(id))),
  testAlert: (id: string) => dataOf(tenant.alerts.test.$post(at(id))),
  overview: () => dataOf(admin.overview.$get()),
  fleetSeries: (hours: 24 | 168) =>
    dataOf(admin.overview.series.$get({ query: { hours: String(hours) } })),
  requests: (id: string, query: QueryOf<'listRequests'>) =>
    dataOf(tenant.requests.$get({ ...at(id), query })),
  recentAlerts: (id: string) => dataOf(tenant.alerts.recent.$get(at(id))),
  plans: () => dataOf(admin.plans.$get()),
  setPlan: (name: string, limits: Limits) =>
    dataOf(plan.$put({ param: segments({ name }), json: limits })),
  removePlan: (name: string) => dataOf(plan.$delete({ param: segments({ name }) })),
  /** One cheap read with a typed key (never shown back), or with the tenant's stored one. */
  checkKey: (platform_key: string) => dataOf(admin.keys.check.$post({ json: { platform_key } })),
  checkTenantKey: (id: string) => dataOf(tenant.key.check.$post(at(id))),
  audit: (query: QueryOf<'listAudit'>) => dataOf(admin.audit.$get({ query })),
  /** The fleet as a file (docs/CONFIG-AS-CODE.md) and the applies made. */
  dumpConfig: () => dataOf(admin.config.$get({ query: {} })),
  configApplies: () => dataOf(admin.config.applies.$get()),
};
