/**
 * The operator API's side of OAuth and partners' keys (docs/OAUTH.md): what each tenant's
 * partner may grant, and the OAuth clients registered with the gateway.
 */
import * as z from 'zod';
import { tokenLimitsSchema } from '../metering/policy';
import { clientBody } from '../oauth/client-metadata';
import { partnerAccessChange } from '../tenants/partner-access';
import type { OAuthClient, OAuthClientPage, PartnerAccess } from '../types/wire';
import { instant, int, tenantParams } from './fields';
import { adminOperation, answerOf } from './operation';

const partnerAccess = () =>
  answerOf<PartnerAccess>()(
    z.object({
      grantable_scopes: z.array(z.string()),
      dynamic_clients: z.boolean(),
      max_keys: int(),
      grant_limits: tokenLimitsSchema.nullable(),
    }),
  );

const oauthClient = () =>
  answerOf<OAuthClient>()(
    z.object({
      client_id: z.string(),
      client_name: z.string(),
      redirect_uris: z.array(z.string()),
      kind: z.enum(['dynamic', 'operator']),
      created_by: z.string().nullable(),
      created_at: instant(),
      last_used_at: instant().nullable(),
      approved: z.boolean(),
    }),
  );

export const getPartnerAccess = adminOperation({
  method: 'get',
  path: '/admin/tenants/:id/partner-access',
  role: 'viewer',
  summary: "What the tenant's partner may grant: to apps through OAuth, and to its own keys",
  params: tenantParams,
  answer: partnerAccess,
});

export const setPartnerAccess = adminOperation({
  method: 'put',
  path: '/admin/tenants/:id/partner-access',
  role: 'admin',
  audit: 'partner_access.changed',
  summary: "Change what the tenant's partner may grant (the fields sent; grants made keep theirs)",
  description:
    '`grantable_scopes`: the most any OAuth grant or partner key may hold (default ' +
    '`["full"]`: never `apikeys:*` or `token:rotate` unless named here; never ' +
    '`partner:manage`). `dynamic_clients`: whether apps that registered themselves may be ' +
    'approved. `max_keys`: working partner keys at once (default 10). `grant_limits`: own ' +
    "limits each new grant gets (null: the tenant's limits alone).",
  params: tenantParams,
  body: partnerAccessChange,
  answer: partnerAccess,
});

export const clientQuery = z.strictObject({
  cursor: z.string().max(64).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

export const listOAuthClients = adminOperation({
  method: 'get',
  path: '/admin/oauth/clients',
  role: 'viewer',
  summary: 'The OAuth clients registered with the gateway, newest first',
  query: clientQuery,
  answer: () =>
    answerOf<OAuthClientPage>()(
      z.object({ clients: z.array(oauthClient()), cursor: z.string().nullable() }),
    ),
});

export const registerOAuthClient = adminOperation({
  method: 'post',
  path: '/admin/oauth/clients',
  role: 'admin',
  audit: 'oauth_client.registered',
  summary: 'Register an OAuth client (a public client: PKCE, no secret)',
  description:
    'Works whether dynamic registration is open or not, and for tenants that refuse ' +
    'self-registered apps. Redirect URIs are matched exactly.',
  body: clientBody,
  status: 201,
  answer: oauthClient,
});

export const removeOAuthClient = adminOperation({
  method: 'delete',
  path: '/admin/oauth/clients/:client_id',
  role: 'admin',
  audit: 'oauth_client.removed',
  summary: 'Remove an OAuth client: it can no longer be approved, exchange codes or refresh',
  params: z.object({ client_id: z.string().max(64) }),
  answer: () => z.object({ client_id: z.string(), removed: z.literal(true) }),
});
