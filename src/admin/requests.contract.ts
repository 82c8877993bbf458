/** The operator API's recent requests of a tenant (docs/OBSERVABILITY.md, "Recent requests"). */
import * as z from 'zod';
import { recentQuerySchema } from '../observability/recent-query';
import type { RecentRequestPage } from '../types/wire';
import { instant, int, tenantParams } from './fields';
import { adminOperation, answerOf } from './operation';

const recentRequest = () =>
  z.object({
    request_id: z.string(),
    at: instant(),
    token_id: z.string(),
    /** The operation id (`team.list`), or what else answered (`usage`, `unmatched`, …). */
    operation: z.string(),
    method: z.string(),
    status: int(),
    code: int().nullable(),
    limiter: z.string().nullable(),
    policy: z.string().nullable(),
    cache: z.string().nullable(),
    upstream_status: int().nullable(),
    upstream_attempts: int().nullable(),
    latency_ms: z.number(),
    upstream_ms: z.number().nullable(),
    trace_id: z.string().nullable(),
    /** `mcp`: an MCP tool call (the operation is the tool); null: a plain HTTP call. */
    via: z.literal('mcp').nullable(),
    /** Why it was refused or failed, in words (null for a success). */
    reason: z.string().nullable(),
  });

export const listRequests = adminOperation({
  method: 'get',
  path: '/admin/tenants/:id/requests',
  role: 'viewer',
  summary:
    "A tenant's requests over a time range, newest first, by request_id, token_id, status or operation",
  description:
    'The newest 20,000 answered below 400 and the newest 20,000 refused or failed, of the ' +
    'last 7 days, as its isolates handed them over (within about 10 s): ids, codes and ' +
    'timings, never a body, query or secret. `from` and `to` narrow them to a range.',
  params: tenantParams,
  query: recentQuerySchema,
  answer: () =>
    answerOf<RecentRequestPage>()(
      z.object({
        requests: z.array(recentRequest()),
        cursor: z.string().nullable(),
        kept: z.object({ per_kind: int(), hours: int() }),
      }),
    ),
});
