/** The operator API's tenants. No operation ever answers with a platform key. */
import * as z from 'zod';
import { tokenLimitsSchema } from '../metering/policy';
import { intFieldOr, nameField, originField, textField } from '../operations/schemas';
import type { CreatedTenant, ListedTenant, PublicTenant, TenantPage } from '../types/wire';
import { instant, tenantParams } from './fields';
import { adminOperation, answerOf } from './operation';
import { planName } from './plans.contract';
import { tokenSpecSchema } from './tokens.contract';

// Printable ASCII only: the key goes into an HTTP header, and workerd warns (quoting the value) on
// anything else.
export const platformKey = textField('platform_key', 512, 8).regex(
  /^[\x21-\x7E]+$/,
  'platform_key must be printable ASCII without spaces',
);
/** Most browser origins one tenant may allow (docs/BOUNDS.md). */
const MAX_CORS_ORIGINS = 20;
export const corsOrigins = z.array(originField('each origin')).max(MAX_CORS_ORIGINS);
export const createBody = z.strictObject({
  name: nameField('name', 100),
  platform_key: platformKey,
  cors_origins: corsOrigins.default([]),
  token: tokenSpecSchema.default({ name: 'default', scopes: ['full'] }),
  /** A plan the tenant starts on (PUT /admin/plans/{name} makes one). */
  plan: planName('plan').optional(),
});
export const updateBody = z
  .strictObject({
    name: nameField('name', 100).optional(),
    platform_key: platformKey.optional(),
    cors_origins: corsOrigins.optional(),
    /** Joins a plan; null leaves it (the tenant's own limits, if any, still win). */
    plan: planName('plan').nullable().optional(),
  })
  .refine(
    (b) => Object.keys(b).length > 0,
    'give at least one of name, platform_key, cors_origins, plan (status: POST .../disable or ' +
      '.../enable)',
  );
export const listQuery = z.strictObject({
  page_size: intFieldOr('page_size', 1, 100, 20),
  cursor: z.string().max(1024).optional(),
  /** Name or id holds this (any case); docs/OPERATING.md, "Tenants". */
  q: z.string().trim().min(1, 'q must not be empty').max(100).optional(),
});

const listedTenant = () =>
  answerOf<ListedTenant>()(
    z.object({
      id: z.string(),
      name: z.string(),
      status: z.enum(['active', 'disabled']),
      key_fingerprint: z.string().nullable(),
      created_at: instant(),
      updated_at: instant(),
      plan: z.string().nullable(),
    }),
  );
const publicTenant = () =>
  answerOf<PublicTenant>()(listedTenant().extend({ cors_origins: z.array(z.string()) }));

export const createTenant = adminOperation({
  method: 'post',
  path: '/admin/tenants',
  role: 'admin',
  audit: 'tenant.created',
  summary: 'Create a tenant and its first token (shown once)',
  body: createBody,
  status: 201,
  answer: () =>
    answerOf<CreatedTenant>()(
      z.object({
        tenant_id: z.string(),
        token_id: z.string(),
        token: z.string(),
        scopes: z.array(z.string()),
        expires_at: instant().nullable(),
        limits: tokenLimitsSchema.nullable(),
        plan: z.string().nullable(),
      }),
    ),
});

export const listTenants = adminOperation({
  method: 'get',
  path: '/admin/tenants',
  role: 'viewer',
  summary: 'List tenants, a page at a time, or search them by name or id (q)',
  query: listQuery,
  answer: () =>
    answerOf<TenantPage>()(
      z.object({ tenants: z.array(listedTenant()), cursor: z.string().nullable() }),
    ),
});

export const getTenant = adminOperation({
  method: 'get',
  path: '/admin/tenants/:id',
  role: 'viewer',
  summary: 'Show a tenant (never its key)',
  params: tenantParams,
  answer: publicTenant,
});

export const updateTenant = adminOperation({
  method: 'patch',
  path: '/admin/tenants/:id',
  role: 'admin',
  audit: 'tenant.updated',
  summary: 'Update a tenant',
  params: tenantParams,
  body: updateBody,
  answer: publicTenant,
});

export const deleteTenant = adminOperation({
  method: 'delete',
  path: '/admin/tenants/:id',
  role: 'admin',
  audit: 'tenant.deleted',
  summary: 'Delete a tenant and its tokens',
  params: tenantParams,
  answer: () => z.object({ tenant_id: z.string(), deleted: z.literal(true) }),
});

export const disableTenant = adminOperation({
  method: 'post',
  path: '/admin/tenants/:id/disable',
  role: 'admin',
  audit: 'tenant.disabled',
  summary: 'Refuse every token of the tenant',
  params: tenantParams,
  answer: publicTenant,
});

export const enableTenant = adminOperation({
  method: 'post',
  path: '/admin/tenants/:id/enable',
  role: 'admin',
  audit: 'tenant.enabled',
  summary: 'Allow the tenant again',
  params: tenantParams,
  answer: publicTenant,
});
