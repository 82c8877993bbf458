/**
 * The operator API's "check key" (docs/OPERATING.md, "Checking a platform key"): a typed
 * key, or a tenant's stored one, tried with one cheap read; never the key in the answer.
 */
import * as z from 'zod';
import type { KeyCheck } from '../types/wire';
import { tenantParams } from './fields';
import { adminOperation, answerOf } from './operation';
import { platformKey } from './tenants.contract';

export const keyCheckBody = z.strictObject({ platform_key: platformKey });

const keyCheck = () =>
  answerOf<KeyCheck>()(
    z.object({
      result: z.enum(['valid', 'unauthorized', 'unreachable', 'error']),
      status: z.number().int().nullable(),
      code: z.number().int().nullable(),
      operation: z.string(),
      ms: z.number(),
    }),
  );

export const checkKey = adminOperation({
  method: 'post',
  path: '/admin/keys/check',
  role: 'admin',
  summary: 'Check a platform key with one cheap read: valid, unauthorized, unreachable or error',
  description:
    'Calls calls.filter_values with the key (its credential header, ROUTE_OVERRIDES ' +
    'applied), around breakers and pauses; the answer never holds the key.',
  body: keyCheckBody,
  answer: keyCheck,
});

export const checkTenantKey = adminOperation({
  method: 'post',
  path: '/admin/tenants/:id/key/check',
  role: 'admin',
  summary: "Check a tenant's stored platform key the same way",
  params: tenantParams,
  answer: keyCheck,
});
