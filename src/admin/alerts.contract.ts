/**
 * The operator API's alerts of a tenant: its webhook (whose signing secret is shown once,
 * in the answer that sets it), a test delivery, and the alerts its TenantGuard raised.
 */
import * as z from 'zod';
import {
  DEFAULT_SERVER_ERROR_PERCENT,
  DEFAULT_THRESHOLDS,
} from '../objects/tenant/alerts/alert-defaults';
import type { AlertSet, AlertSettings, AlertTest, RecentAlert } from '../types/wire';
import { instant, int, tenantParams } from './fields';
import { adminOperation, answerOf } from './operation';

export const alertsBody = z.strictObject({
  url: z.url({ protocol: /^https?$/, error: 'url must be an http(s) URL' }).max(2048),
  thresholds: z
    .array(
      z
        .number()
        .int()
        .min(1, 'thresholds are percents from 1 to 100')
        .max(100, 'thresholds are percents from 1 to 100'),
    )
    .min(1)
    .max(10)
    .default(DEFAULT_THRESHOLDS),
  /** An hour whose server errors reach this share of its requests raises an alert. */
  server_error_percent: z
    .number()
    .int()
    .min(1, 'server_error_percent is a percent from 1 to 100')
    .max(100, 'server_error_percent is a percent from 1 to 100')
    .default(DEFAULT_SERVER_ERROR_PERCENT),
});

const alertSettings = () =>
  answerOf<AlertSettings>()(
    z.object({
      url: z.string(),
      thresholds: z.array(int()),
      server_error_percent: int(),
    }),
  );

const alertPayload = () =>
  z.discriminatedUnion('kind', [
    z.object({
      kind: z.literal('quota'),
      tenant_id: z.string(),
      policy: z.string(),
      threshold: int(),
      used: int(),
      limit: int(),
      period_end: instant(),
      sent_at: instant(),
    }),
    z.object({
      kind: z.literal('platform_key_rejected'),
      tenant_id: z.string(),
      upstream_status: int(),
      count: int(),
      period_start: instant(),
      period_end: instant(),
      sent_at: instant(),
    }),
    z.object({
      kind: z.literal('server_errors'),
      tenant_id: z.string(),
      threshold: int(),
      share_percent: z.number(),
      errors: int(),
      requests: int(),
      period_start: instant(),
      period_end: instant(),
      sent_at: instant(),
    }),
  ]);

const recentAlert = () =>
  answerOf<RecentAlert>()(
    z.object({
      id: int(),
      at: instant(),
      delivery: z.enum(['pending', 'delivered', 'failed', 'no_webhook']),
      alert: alertPayload(),
    }),
  );

export const setAlerts = adminOperation({
  method: 'put',
  path: '/admin/tenants/:id/alerts',
  role: 'admin',
  audit: 'alerts.set',
  summary: 'Set the quota-alert webhook (its signing secret is shown once)',
  params: tenantParams,
  body: alertsBody,
  answer: () => answerOf<AlertSet>()(alertSettings().extend({ secret: z.string() })),
});

export const getAlerts = adminOperation({
  method: 'get',
  path: '/admin/tenants/:id/alerts',
  role: 'viewer',
  summary: 'The quota-alert webhook, without its secret',
  description: "A viewer sees the URL's origin only: it may carry the receiver's credentials.",
  params: tenantParams,
  answer: () => alertSettings().nullable(),
});

export const removeAlerts = adminOperation({
  method: 'delete',
  path: '/admin/tenants/:id/alerts',
  role: 'admin',
  audit: 'alerts.removed',
  summary: 'Remove the quota-alert webhook',
  params: tenantParams,
  answer: () => z.null(),
});

export const testAlert = adminOperation({
  method: 'post',
  path: '/admin/tenants/:id/alerts/test',
  role: 'admin',
  audit: 'alerts.tested',
  summary: 'Send a signed test alert to the webhook now (not retried)',
  params: tenantParams,
  answer: () =>
    answerOf<AlertTest>()(
      z.object({
        delivered: z.boolean(),
        status: int().nullable(),
        failure: z.enum(['timeout', 'unreachable', 'secret_unavailable']).nullable(),
        ms: z.number(),
      }),
    ),
});

export const recentAlerts = adminOperation({
  method: 'get',
  path: '/admin/tenants/:id/alerts/recent',
  role: 'viewer',
  summary:
    'The alerts the TenantGuard raised (quotas, the platform key refused, server errors), newest first',
  params: tenantParams,
  answer: () => z.object({ alerts: z.array(recentAlert()) }),
});
