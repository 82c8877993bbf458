/** The operator API's audit log (newest first, paged) and key maintenance. */
import * as z from 'zod';
import { intFieldOr } from '../operations/schemas';
import type { AuditPage } from '../types/wire';
import { instant, int, tenantIdField } from './fields';
import { adminOperation, answerOf } from './operation';

export const auditQuery = z.strictObject({
  page_num: intFieldOr('page_num', 1, 1_000_000, 1),
  page_size: intFieldOr('page_size', 1, 100, 20),
  tenant_id: tenantIdField('tenant_id').optional(),
  actor: z.string().min(1).max(320).optional(),
  action: z
    .string()
    .regex(
      /^[a-z_]+(\.[a-z_]+)*\.?$/,
      'action must be an action name (tokens.revoked) or a prefix (tokens.)',
    )
    .max(64)
    .optional(),
  since: z.iso.datetime({ offset: true, error: 'since must be an ISO date-time' }).optional(),
  until: z.iso.datetime({ offset: true, error: 'until must be an ISO date-time' }).optional(),
});

const auditEntry = () =>
  z.object({
    id: int(),
    at: instant(),
    action: z.string(),
    tenant_id: z.string().nullable(),
    token_id: z.string().nullable(),
    request_id: z.string(),
    /** Who did it: an Access email (or service token name), or `admin-token`. */
    actor: z.string(),
    ip: z.string().nullable(),
    colo: z.string().nullable(),
    detail: z.record(z.string(), z.unknown()),
  });

export const listAudit = adminOperation({
  method: 'get',
  path: '/admin/audit',
  role: 'viewer',
  summary: 'The audit log, newest first',
  query: auditQuery,
  answer: () =>
    answerOf<AuditPage>()(
      z.object({
        page_num: int(),
        page_size: int(),
        total: int(),
        total_page: int(),
        data: z.array(auditEntry()),
      }),
    ),
});

export const reencryptKeys = adminOperation({
  method: 'post',
  path: '/admin/maintenance/reencrypt',
  role: 'admin',
  audit: 'keys.resealed',
  summary: 'Re-seal every platform key under the current encryption key',
  description:
    "Also re-seals the alert webhooks' signing secrets, and counts the live tokens that " +
    'still depend on an older key (their tag) or on none (legacy): rotate those before the ' +
    'old key is removed (docs/SECURITY.md, "Gateway tokens").',
  answer: () =>
    z.object({
      tenants: int(),
      resealed: int(),
      alert_secrets_resealed: int(),
      tokens_on_older_keys: int(),
      legacy_tokens: int(),
    }),
});
