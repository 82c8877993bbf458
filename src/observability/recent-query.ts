/**
 * The query of a tenant's recent requests, shared by the operator API
 * (`GET /admin/tenants/{id}/requests`) and a tenant's own view (`GET /usage/requests`):
 * the filters `request_id`, `token_id`, `status` (a status, or a class such as
 * `4xx`) and `operation`, a page size and a cursor; and the reason each refused or
 * failed request is given, in words (docs/OBSERVABILITY.md, "Recent requests").
 */
import * as z from 'zod';
import { ERRORS } from '../errors';
import {
  RECENT_HOURS,
  RECENT_KEPT,
  type RecentQuery,
} from '../objects/tenant/recent/recent-requests-part';
import { intFieldOr } from '../routes/schemas';
import type { RecentRequest, RecentRequestPage } from '../types/wire';

const tokenId = z.string().regex(/^tok_[0-9A-Za-z]{16}$/, 'token_id must be a token id (tok_...)');

export const recentQuerySchema = z.strictObject({
  request_id: z
    .string()
    .min(1)
    .max(200, 'request_id must be 1 to 200 characters')
    .regex(/^[\x21-\x7E]+$/, 'request_id must be printable ASCII without spaces')
    .optional(),
  token_id: tokenId.optional(),
  status: z
    .string()
    .regex(/^([1-5]xx|[1-5]\d\d)$/, 'status must be an HTTP status (429) or a class (4xx)')
    .optional(),
  operation: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'operation must be an operation id (team.list)')
    .optional(),
  page_size: intFieldOr('page_size', 1, 200, 50),
  cursor: z
    .string()
    .regex(/^\d{1,15}$/, 'cursor must come from an earlier page')
    .optional(),
});

export function recentQuery(
  q: z.output<typeof recentQuerySchema>,
  failedOnly = false,
): RecentQuery {
  const status = q.status?.endsWith('xx')
    ? (q.status as '2xx' | '3xx' | '4xx' | '5xx')
    : q.status === undefined
      ? undefined
      : Number(q.status);
  return {
    ...(q.request_id !== undefined ? { requestId: q.request_id } : {}),
    ...(q.token_id !== undefined ? { tokenId: q.token_id } : {}),
    ...(status !== undefined ? { status } : {}),
    ...(q.operation !== undefined ? { operation: q.operation } : {}),
    ...(q.cursor !== undefined ? { before: Number(q.cursor) } : {}),
    failedOnly,
    limit: q.page_size,
  };
}

const byCode = new Map<number, string>(Object.values(ERRORS).map((e) => [e.code, e.msg]));

/** Why a request was refused or failed, in words; null for a success. */
export function reasonOf(r: Omit<RecentRequest, 'reason'>): string | null {
  if (r.status < 400) return null;
  const said = r.code === null ? undefined : byCode.get(r.code);
  if (said) {
    const policy = r.policy ? ` (policy ${r.policy})` : '';
    const platform = r.upstream_status ? `; the platform answered HTTP ${r.upstream_status}` : '';
    return `${said}${policy}${platform}`;
  }
  if (r.code !== null) return `The platform answered code ${r.code} (HTTP ${r.status})`;
  return `HTTP ${r.status}`;
}

/** A page as the API answers it: each request with its reason, the cursor as text. */
export function recentPage(page: {
  requests: Omit<RecentRequest, 'reason'>[];
  cursor: number | null;
}): RecentRequestPage {
  return {
    requests: page.requests.map((r) => ({ ...r, reason: reasonOf(r) })),
    cursor: page.cursor === null ? null : String(page.cursor),
    kept: { per_kind: RECENT_KEPT, hours: RECENT_HOURS },
  };
}
