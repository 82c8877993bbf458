/**
 * The query of a tenant's recent requests, shared by the operator API
 * (`GET /admin/tenants/{id}/requests`) and a tenant's own view (`GET /usage/requests`):
 * the filters `request_id`, `token_id`, `status` (a status, or a class such as
 * `4xx`) and `operation`, a time range (`from`, `to`), a page size and a cursor (docs/OBSERVABILITY.md, "Recent
 * requests"). No Worker code: the operator API's definitions use the schema, and the
 * console type-checks against them; the answer is made in recent-page.ts.
 */
import * as z from 'zod';
import type { RecentCursor, RecentQuery } from '../objects/tenant/recent/recent-requests-part';
import { intFieldOr } from '../operations/schemas';

const tokenId = z.string().regex(/^tok_[0-9A-Za-z]{16}$/, 'token_id must be a token id (tok_...)');

export const recentQuerySchema = z
  .strictObject({
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
    /** The range (ISO date-times, both included); by default all that is kept (7 days). */
    from: z.iso.datetime({ offset: true, error: 'from must be an ISO date-time' }).optional(),
    to: z.iso.datetime({ offset: true, error: 'to must be an ISO date-time' }).optional(),
    page_size: intFieldOr('page_size', 1, 200, 50),
    cursor: z
      .string()
      .regex(/^\d{1,15}-\d{1,15}$/, 'cursor must come from an earlier page')
      .optional(),
  })
  .refine((q) => !q.from || !q.to || Date.parse(q.from) <= Date.parse(q.to), {
    path: ['to'],
    message: 'to must not be before from',
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
    ...(q.from !== undefined ? { from: Date.parse(q.from) } : {}),
    ...(q.to !== undefined ? { to: Date.parse(q.to) } : {}),
    ...(q.cursor !== undefined ? { before: cursorOf(q.cursor) } : {}),
    failedOnly,
    limit: q.page_size,
  };
}

/** An earlier page's cursor (`<at>-<seq>`, recent-page.ts) as the part reads it. */
function cursorOf(text: string): RecentCursor {
  const [at = 0, seq = 0] = text.split('-').map(Number);
  return { at, seq };
}
