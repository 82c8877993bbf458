/**
 * Operator API: what each tenant's partner may grant, and the OAuth clients (their
 * definitions: oauth.contract.ts; docs/OAUTH.md).
 */
import { GatewayError, invalidField } from '../errors';
import { oauthClients } from '../objects/clients/oauth-clients';
import { catalogOf } from '../operations/catalog';
import { grantScopes } from '../tenants/scopes';
import type { PartnerAccess } from '../types/wire';
import { adminStores, audit, existingTenant, guardFor } from './common';
import { type AdminApp, handle } from './handle';
import * as contract from './oauth.contract';

export function oauthAdminRoutes(app: AdminApp): void {
  handle(app, contract.getPartnerAccess, async (c) => {
    const { id } = c.req.valid('param');
    await existingTenant(await adminStores(c), id);
    const access: PartnerAccess = await guardFor(c.env, id).grants().access();
    return access;
  });

  handle(app, contract.setPartnerAccess, async (c, op) => {
    const { id } = c.req.valid('param');
    const change = c.req.valid('json');
    await existingTenant(await adminStores(c), id);
    if (change.grantable_scopes) {
      const { unknown } = grantScopes(change.grantable_scopes, catalogOf(c.get('settings')).groups);
      if (unknown.length > 0) {
        throw invalidField('body', 'grantable_scopes', `Unknown scope ${unknown[0]}`);
      }
    }
    const access: PartnerAccess = await guardFor(c.env, id).grants().setAccess(change);
    await audit(c, op.audit, { tenant_id: id, detail: { ...change } });
    return access;
  });

  handle(app, contract.listOAuthClients, async (c) => {
    const { cursor, limit } = c.req.valid('query');
    return oauthClients(c.env).list(limit, cursor ?? null);
  });

  handle(app, contract.registerOAuthClient, async (c, op) => {
    const body = c.req.valid('json');
    const registered = await oauthClients(c.env).register(
      { ...body, kind: 'operator', created_by: c.get('operator')?.actor ?? 'admin-token' },
      c.get('settings').OAUTH_CLIENTS_MAX,
      Date.now(),
    );
    if (registered.kind === 'full') {
      throw new GatewayError('CONFLICT', {
        message: 'The gateway holds OAUTH_CLIENTS_MAX clients: remove some first',
      });
    }
    const { client } = registered;
    await audit(c, op.audit, {
      detail: {
        client_id: client.client_id,
        client_name: client.client_name,
        redirect_uris: client.redirect_uris,
      },
    });
    return client;
  });

  handle(app, contract.removeOAuthClient, async (c, op) => {
    const { client_id } = c.req.valid('param');
    if (!(await oauthClients(c.env).remove(client_id))) {
      throw new GatewayError('RESOURCE_NOT_FOUND', { message: 'No such OAuth client' });
    }
    await audit(c, op.audit, { detail: { client_id } });
    return { client_id, removed: true as const };
  });
}
