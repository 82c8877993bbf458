/**
 * Operator API: "check key" (docs/OPERATING.md, "Checking a platform key"). A key
 * typed into a form (`POST /admin/keys/check`, before a tenant is made or its key
 * changed), or a tenant's stored one (`POST /admin/tenants/{id}/key/check`), is
 * tried with one cheap read; the answer says what the platform said, never the key.
 */
import { Hono } from 'hono';
import * as z from 'zod';
import { GatewayError } from '../errors';
import { validated } from '../middleware/validate';
import { catalogOf } from '../routes/catalog';
import type { HonoEnv } from '../types/context';
import type { KeyCheck } from '../types/wire';
import { checkPlatformKey, KEY_CHECK_OPERATION } from '../upstream/key-check';
import { adminStores, ok, tenantParams } from './common';
import { platformKey } from './tenants';

export const keyCheckBody = z.strictObject({ platform_key: platformKey });

export function keyCheckRoutes(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();

  const check = (settings: HonoEnv['Variables']['settings'], key: string, requestId: string) => {
    const route = catalogOf(settings).byId.get(KEY_CHECK_OPERATION);
    if (!route) throw new Error(`${KEY_CHECK_OPERATION} is not in the route table`);
    return checkPlatformKey(settings, route, key, requestId);
  };

  app.post('/keys/check', validated('json', keyCheckBody), async (c) => {
    const { platform_key } = c.req.valid('json');
    return c.json(ok<KeyCheck>(await check(c.get('settings'), platform_key, c.get('requestId'))));
  });

  app.post('/tenants/:id/key/check', validated('param', tenantParams), async (c) => {
    const { id } = c.req.valid('param');
    const tenant = await (await adminStores(c)).tenants.get(id);
    if (!tenant) throw new GatewayError('RESOURCE_NOT_FOUND', { message: 'No such tenant' });
    const result = await check(c.get('settings'), tenant.platform_key, c.get('requestId'));
    return c.json(ok<KeyCheck>(result));
  });

  return app;
}
