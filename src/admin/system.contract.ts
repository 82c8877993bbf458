/** The operator API about itself: who calls, this isolate's counters, its own contract. */
import * as z from 'zod';
import type { Whoami } from '../types/wire';
import { int } from './fields';
import { adminOperation, answerOf } from './operation';

export const whoami = adminOperation({
  method: 'get',
  path: '/admin/whoami',
  role: 'viewer',
  summary: 'Who is calling: the actor (Access email or admin-token), role and sign-in',
  description: 'And the settings the console explains in its forms.',
  answer: () =>
    answerOf<Whoami>()(
      z.object({
        actor: z.string(),
        role: z.enum(['admin', 'viewer']),
        via: z.enum(['access', 'admin-token']),
        settings: z.object({ webhook_local_targets: z.boolean() }),
      }),
    ),
});

export const isolateStats = adminOperation({
  method: 'get',
  path: '/admin/stats',
  role: 'viewer',
  summary: "This isolate's work counters",
  description: 'For the benchmark and for operators (docs/OBSERVABILITY.md, "Work counters").',
  answer: () =>
    z.object({
      isolate: z.object({
        started_at: int(),
        requests: int(),
        kv_reads: int(),
        cache_api_calls: int(),
        guard_calls: int(),
        limit_refusals: int(),
        limit_refusals_asked: int(),
        upstream_calls: int(),
        upstream_retries: int(),
        breaker_refusals: int(),
        held_refusals: int(),
        stale_if_error: int(),
        usage_events: int(),
        usage_events_lost: int(),
        l1: z.object({ bytes: int(), entries: int(), max_bytes: int() }),
        breakers: z.record(
          z.string(),
          z.object({
            state: z.string(),
            held: z.boolean(),
            keys: int(),
            keys_open: int(),
            keys_half_open: int(),
            keys_held: int(),
          }),
        ),
      }),
    }),
});

export const adminOpenApi = adminOperation({
  method: 'get',
  path: '/admin/openapi.json',
  role: 'viewer',
  summary: 'This document',
  envelope: false,
  answer: () => z.record(z.string(), z.unknown()).meta({ description: 'An OpenAPI 3.1 document.' }),
});
