/** Operator API: the audit log (newest first, paged) and key maintenance. */
import { Hono } from 'hono';
import * as z from 'zod';
import { auditLog } from '../audit/log';
import type { HonoEnv } from '../env';
import { ok } from '../errors';
import { validated } from '../middleware/validate';
import { intFieldOr } from '../routes/schemas';
import { adminStores, audit, tenantIdField } from './common';

export const auditQuery = z.strictObject({
  page_num: intFieldOr('page_num', 1, 1_000_000, 1),
  page_size: intFieldOr('page_size', 1, 100, 20),
  tenant_id: tenantIdField('tenant_id').optional(),
});

export function auditRoutes(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();

  app.get('/audit', validated('query', auditQuery), async (c) => {
    const { page_num, page_size, tenant_id } = c.req.valid('query');
    return c.json(ok(await auditLog(c.env).list(page_num, page_size, tenant_id)));
  });

  // After putting a new key first in KEY_ENCRYPTION_KEY: re-seal every stored
  // platform key under it, so the old key can be removed.
  app.post('/maintenance/reencrypt', async (c) => {
    const { tenants: store } = await adminStores(c);
    let tenants = 0;
    let resealed = 0;
    let cursor: string | undefined;
    do {
      const page = await store.list(cursor, 100);
      for (const t of page.tenants) {
        const stored = await store.getStored(t.id);
        if (!stored) continue;
        tenants++;
        if (await store.reseal(stored)) resealed++;
      }
      cursor = page.cursor ?? undefined;
    } while (cursor);
    await audit(c, 'keys.resealed', { detail: { tenants, resealed } });
    return c.json(ok({ tenants, resealed }));
  });

  return app;
}
