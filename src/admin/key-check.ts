/**
 * Operator API: "check key" (docs/OPERATING.md, "Checking a platform key"). A key
 * typed into a form (`POST /admin/keys/check`, before a tenant is made or its key
 * changed), or a tenant's stored one (`POST /admin/tenants/{id}/key/check`), is
 * tried with one cheap read; the answer says what the platform said, never the key.
 */
import { GatewayError } from '../errors';
import { catalogOf } from '../operations/catalog';
import type { HonoEnv } from '../types/context';
import { checkPlatformKey, KEY_CHECK_OPERATION } from '../upstream/key-check';
import { adminStores } from './common';
import { type AdminApp, handle } from './handle';
import * as contract from './key-check.contract';

export function keyCheckRoutes(app: AdminApp): void {
  const check = (settings: HonoEnv['Variables']['settings'], key: string, requestId: string) => {
    const operation = catalogOf(settings).byId.get(KEY_CHECK_OPERATION);
    if (!operation) throw new Error(`${KEY_CHECK_OPERATION} is not in the operation table`);
    return checkPlatformKey(settings, operation, key, requestId);
  };

  handle(app, contract.checkKey, async (c) => {
    const { platform_key } = c.req.valid('json');
    return check(c.get('settings'), platform_key, c.get('requestId'));
  });

  handle(app, contract.checkTenantKey, async (c) => {
    const { id } = c.req.valid('param');
    const tenant = await (await adminStores(c)).tenants.get(id);
    if (!tenant) throw new GatewayError('RESOURCE_NOT_FOUND', { message: 'No such tenant' });
    return check(c.get('settings'), tenant.platform_key, c.get('requestId'));
  });
}
