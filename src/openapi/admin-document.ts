/**
 * The operator API's own OpenAPI document (GET /admin/openapi.json, behind the
 * admin token), from the operator API's zod schemas where it has them.
 */
import type * as z from 'zod';
import { alertsBody } from '../admin/alerts';
import { auditQuery } from '../admin/audit';
import { tenantParams, tokenParams } from '../admin/common';
import { keyCheckBody } from '../admin/key-check';
import { usageQuery } from '../admin/limits';
import { overviewQuery } from '../admin/overview';
import { planParams } from '../admin/plans';
import { portalLinkBody } from '../admin/portal-links';
import { rotateBody } from '../admin/rotation';
import { createBody, listQuery, updateBody } from '../admin/tenants';
import { tokenSpecSchema } from '../admin/token-spec';
import { revokeQuery } from '../admin/tokens';
import { limitsSchema, tokenLimitsSchema } from '../metering/policy';
import { historyQuerySchema } from '../observability/history-query';
import { recentQuerySchema } from '../observability/recent-query';
import { GATEWAY_VERSION } from '../version';
import { jsonBody, parametersOf } from './schema';

interface AdminOperation {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  path: string;
  summary: string;
  description?: string;
  query?: z.ZodType;
  body?: z.ZodType;
}

const T = '/admin/tenants/{id}';
const OPERATIONS: AdminOperation[] = [
  {
    method: 'post',
    path: '/admin/tenants',
    summary: 'Create a tenant and its first token (shown once)',
    body: createBody,
  },
  {
    method: 'get',
    path: '/admin/tenants',
    summary: 'List tenants, a page at a time, or search them by name or id (q)',
    query: listQuery,
  },
  { method: 'get', path: T, summary: 'Show a tenant (never its key)' },
  { method: 'patch', path: T, summary: 'Update a tenant', body: updateBody },
  { method: 'delete', path: T, summary: 'Delete a tenant and its tokens' },
  { method: 'post', path: `${T}/disable`, summary: 'Refuse every token of the tenant' },
  { method: 'post', path: `${T}/enable`, summary: 'Allow the tenant again' },
  {
    method: 'post',
    path: `${T}/tokens`,
    summary: 'Issue a token (shown once)',
    body: tokenSpecSchema,
  },
  {
    method: 'get',
    path: `${T}/tokens`,
    summary: "List a tenant's tokens, oldest first, with their families (never the secrets)",
  },
  {
    method: 'post',
    path: `${T}/tokens/{token_id}/rotate`,
    summary: 'Rotate a token with an overlap',
    description:
      'A family rotates one step at a time: 409 (40902) when the token already has a working ' +
      'successor (`data.successor_id`) or its own ancestor still works (`data.ancestor_id`).',
    body: rotateBody,
  },
  {
    method: 'delete',
    path: `${T}/tokens/{token_id}`,
    summary: 'Revoke a token at once (with_successors=true: every token rotated from it too)',
    query: revokeQuery,
  },
  {
    method: 'put',
    path: `${T}/tokens/{token_id}/limits`,
    summary: "Set a token's own limits",
    body: tokenLimitsSchema,
  },
  {
    method: 'delete',
    path: `${T}/tokens/{token_id}/limits`,
    summary: "Remove a token's own limits",
  },
  {
    method: 'put',
    path: `${T}/limits`,
    summary: "Replace a tenant's limits",
    description:
      '`limiter: "leased"` (the default): isolates admit from leases the TenantGuard grants ' +
      'and renews in the background; never more than a limit passes, and refusals, ' +
      'revocations and purges reach every isolate within LEASE_MAX_MS (1 s). ' +
      '`limiter: "exact"`: one TenantGuard call per request; a limit refuses the very next ' +
      'request. Policies count in a sliding window unless `algorithm: "fixed"`.',
    body: limitsSchema,
  },
  {
    method: 'delete',
    path: `${T}/limits`,
    summary: "Remove a tenant's own limits: its plan's hold again, or the defaults",
  },
  {
    method: 'post',
    path: '/admin/keys/check',
    summary: 'Check a platform key with one cheap read: valid, unauthorized, unreachable or error',
    description:
      'Calls calls.filter_values with the key (its credential header, ROUTE_OVERRIDES ' +
      'applied), around breakers and pauses; the answer never holds the key.',
    body: keyCheckBody,
  },
  {
    method: 'post',
    path: `${T}/key/check`,
    summary: "Check a tenant's stored platform key the same way",
  },
  {
    method: 'get',
    path: '/admin/overview',
    summary:
      'The last hours across tenants: top tenants by requests, refusals and 5xx, and every tenant whose platform key the platform refused',
    description:
      'From the fleet boards the TenantGuards report to (at most a minute behind): 16 ' +
      'Durable Object calls in parallel, whatever the number of tenants.',
    query: overviewQuery,
  },
  {
    method: 'get',
    path: `${T}/alerts/recent`,
    summary:
      'The alerts the TenantGuard raised (quotas, the platform key refused, server errors), newest first',
  },
  { method: 'get', path: '/admin/plans', summary: 'The plans, with how many tenants each has' },
  { method: 'get', path: '/admin/plans/{name}', summary: 'One plan' },
  {
    method: 'put',
    path: '/admin/plans/{name}',
    summary: "Set a plan (the same body as a tenant's limits); every tenant on it takes it",
    description:
      'Answers once every tenant on the plan has it in its TenantGuard (then within ' +
      'LEASE_MAX_MS everywhere); `pending` counts those that could not be reached, retried ' +
      'by the plan book. A tenant joins with PATCH /admin/tenants/{id} `{"plan": "<name>"}`; ' +
      'its own limits, when set, still win.',
    body: limitsSchema,
  },
  {
    method: 'delete',
    path: '/admin/plans/{name}',
    summary: 'Remove a plan no tenant is on (409 otherwise)',
  },
  {
    method: 'get',
    path: `${T}/usage`,
    summary:
      "Current windows, what remains, TenantGuard calls (with token_id, that token's own too)",
    query: usageQuery,
  },
  {
    method: 'get',
    path: `${T}/analytics`,
    summary: 'Usage history as series, or CSV with Accept: text/csv',
    query: historyQuerySchema,
  },
  {
    method: 'get',
    path: `${T}/requests`,
    summary:
      "A tenant's recent requests, newest first, by request_id, token_id, status or operation",
    description:
      'The newest 1,000 answered below 400 and the newest 1,000 refused or failed, of the ' +
      'last 24 h, as its isolates handed them over (within about 10 s): ids, codes and ' +
      'timings, never a body, query or secret.',
    query: recentQuerySchema,
  },
  {
    method: 'put',
    path: `${T}/alerts`,
    summary: 'Set the quota-alert webhook (its signing secret is shown once)',
    body: alertsBody,
  },
  { method: 'get', path: `${T}/alerts`, summary: 'The quota-alert webhook, without its secret' },
  { method: 'delete', path: `${T}/alerts`, summary: 'Remove the quota-alert webhook' },
  {
    method: 'post',
    path: `${T}/alerts/test`,
    summary: 'Send a signed test alert to the webhook now (not retried)',
  },
  {
    method: 'post',
    path: `${T}/cache/purge`,
    summary: 'Purge the read cache of every tenant sharing the platform key',
  },
  {
    method: 'post',
    path: `${T}/portal-links`,
    summary: 'A partner portal link: a usage:read token for at most an hour, in the URL fragment',
    body: portalLinkBody,
  },
  {
    method: 'get',
    path: '/admin/audit',
    summary: 'The audit log, newest first',
    query: auditQuery,
  },
  {
    method: 'post',
    path: '/admin/maintenance/reencrypt',
    summary: 'Re-seal every platform key under the current encryption key',
  },
  {
    method: 'get',
    path: '/admin/whoami',
    summary: 'Who is calling: the actor (Access email or admin-token), role and sign-in',
  },
  { method: 'get', path: '/admin/stats', summary: "This isolate's work counters" },
  {
    method: 'get',
    path: '/admin/operations',
    summary:
      'The platform operations served, their groups, and the scopes and presets a token may have',
    description:
      'Built-in operations with ROUTE_OVERRIDES applied, then those PLATFORM_OPERATIONS ' +
      'declares (`declared: true`).',
  },
  {
    method: 'post',
    path: '/admin/operations/check',
    summary: 'Whether a PLATFORM_OPERATIONS value would parse, naming each bad entry and field',
    description:
      'Changes nothing: the body is the candidate value (a JSON object by operation id).',
  },
  { method: 'get', path: '/admin/openapi.json', summary: 'This document' },
];

/** The operator routes' own path schemas: a token under a tenant, a tenant, or a plan. */
const pathParamsOf = (path: string) =>
  path.includes('{token_id}')
    ? tokenParams
    : path.includes('{id}')
      ? tenantParams
      : path.includes('{name}')
        ? planParams
        : undefined;

let doc: Record<string, unknown> | undefined;

export function adminDocument(): Record<string, unknown> {
  doc ??= {
    openapi: '3.1.0',
    info: { title: 'Agent Platform gateway: operator API', version: GATEWAY_VERSION },
    security: [{ adminToken: [] }, { access: [] }],
    components: {
      securitySchemes: {
        adminToken: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' },
        access: {
          type: 'apiKey',
          in: 'header',
          name: 'Cf-Access-Jwt-Assertion',
          description: 'A Cloudflare Access JWT (or the CF_Authorization cookie); docs/CONSOLE.md',
        },
      },
    },
    paths: OPERATIONS.reduce<Record<string, Record<string, unknown>>>((paths, op) => {
      const parameters = [
        ...parametersOf(pathParamsOf(op.path), 'path'),
        ...parametersOf(op.query, 'query'),
      ];
      paths[op.path] = {
        ...paths[op.path],
        [op.method]: {
          summary: op.summary,
          ...(op.description ? { description: op.description } : {}),
          ...(parameters.length > 0 ? { parameters } : {}),
          ...jsonBody(op.body),
          responses: { '200': { description: 'The envelope `{code: 0, msg, data}`.' } },
        },
      };
      return paths;
    }, {}),
  };
  return doc;
}
