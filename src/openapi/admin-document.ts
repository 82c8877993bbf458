/**
 * The operator API's own OpenAPI document (GET /admin/openapi.json, behind the
 * admin token), from the operator API's zod schemas where it has them.
 */
import type * as z from 'zod';
import { alertsBody } from '../admin/alerts';
import { auditQuery } from '../admin/audit';
import { tenantParams, tokenParams } from '../admin/common';
import { usageQuery } from '../admin/limits';
import { portalLinkBody } from '../admin/portal-links';
import { rotateBody } from '../admin/rotation';
import { createBody, listQuery, updateBody } from '../admin/tenants';
import { tokenSpecSchema } from '../admin/token-spec';
import { revokeQuery } from '../admin/tokens';
import { limitsSchema, tokenLimitsSchema } from '../metering/policy';
import { historyQuerySchema } from '../observability/history-query';
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
  { method: 'delete', path: `${T}/limits`, summary: 'Return a tenant to the default limits' },
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

/** The operator routes' own path schemas: a token under a tenant, or a tenant. */
const pathParamsOf = (path: string) =>
  path.includes('{token_id}') ? tokenParams : path.includes('{id}') ? tenantParams : undefined;

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
