/** The operator API's view of the platform operations these settings serve. */
import * as z from 'zod';
import type { Operations } from '../types/wire';
import { adminOperation, answerOf } from './operation';

const names = () => z.array(z.string()).readonly();

export const listOperations = adminOperation({
  method: 'get',
  path: '/admin/operations',
  role: 'viewer',
  summary:
    'The platform operations served, their groups, and the scopes and presets a token may have',
  description:
    'Built-in operations with ROUTE_OVERRIDES applied, then those PLATFORM_OPERATIONS ' +
    'declares (`declared: true`).',
  answer: () =>
    answerOf<Operations>()(
      z.object({
        operations: z.array(
          z.object({
            id: z.string(),
            method: z.string(),
            path: z.string(),
            upstream_path: z.string(),
            credential: z.string(),
            group: z.string(),
            scope: z.string(),
            cost: z.number(),
            cache: z
              .object({
                ttl_s: z.number(),
                grace_s: z.number(),
                stale_if_error_s: z.number().optional(),
              })
              .nullable(),
            timeout_ms: z.number(),
            declared: z.boolean(),
          }),
        ),
        groups: names(),
        quota_groups: names(),
        scopes: names(),
        presets: names(),
      }),
    ),
});

export const checkOperations = adminOperation({
  method: 'post',
  path: '/admin/operations/check',
  role: 'admin',
  summary: 'Whether a PLATFORM_OPERATIONS value would parse, naming each bad entry and field',
  description:
    'Changes nothing: the body is the candidate value (a JSON object by operation id); any ' +
    'JSON is taken, and what would not parse is named in `problems`.',
  body: z.unknown().meta({
    description: 'A PLATFORM_OPERATIONS value: a JSON object by operation id',
  }),
  answer: () =>
    z.object({
      valid: z.boolean(),
      operations: z.array(z.string()),
      problems: z.array(
        z.object({ operation: z.string().nullable(), field: z.string(), message: z.string() }),
      ),
    }),
});
