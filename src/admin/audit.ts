/** Operator API: the audit log (newest first, paged) and key maintenance. */
import { Hono } from 'hono';
import * as z from 'zod';
import { ok } from '../errors';
import { validated } from '../middleware/validate';
import { auditLog } from '../objects/audit/audit-log';
import { intFieldOr } from '../routes/schemas';
import { keyRing } from '../tenants/crypto';
import type { HonoEnv } from '../types/context';
import type { AuditPage } from '../types/wire';
import { adminStores, audit, guardFor, tenantIdField } from './common';

export const auditQuery = z.strictObject({
  page_num: intFieldOr('page_num', 1, 1_000_000, 1),
  page_size: intFieldOr('page_size', 1, 100, 20),
  tenant_id: tenantIdField('tenant_id').optional(),
  actor: z.string().min(1).max(320).optional(),
  action: z
    .string()
    .regex(
      /^[a-z_]+(\.[a-z_]+)*\.?$/,
      'action must be an action name (tokens.revoked) or a prefix (tokens.)',
    )
    .max(64)
    .optional(),
  since: z.iso.datetime({ offset: true, error: 'since must be an ISO date-time' }).optional(),
  until: z.iso.datetime({ offset: true, error: 'until must be an ISO date-time' }).optional(),
});

export function auditRoutes(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();

  app.get('/audit', validated('query', auditQuery), async (c) => {
    const q = c.req.valid('query');
    const filter = {
      tenantId: q.tenant_id,
      // Emails are stored in lower case; `token:<id>` and `admin-token` as they are.
      actor: q.actor?.includes('@') ? q.actor.toLowerCase() : q.actor,
      action: q.action,
      // Stored times are UTC ISO strings: compare like with like.
      since: q.since && new Date(q.since).toISOString(),
      until: q.until && new Date(q.until).toISOString(),
    };
    const page: AuditPage = await auditLog(c.env).list(q.page_num, q.page_size, filter);
    return c.json(ok(page));
  });

  // After putting a new key first in KEY_ENCRYPTION_KEY: re-seal every stored
  // platform key and webhook secret under it, and count the tokens that still
  // depend on an older key (their tag) or on none (legacy): rotate those
  // before the old key is removed (docs/SECURITY.md, "Gateway tokens").
  app.post('/maintenance/reencrypt', async (c) => {
    const { tenants: store } = await adminStores(c);
    const ring = await keyRing(c.get('settings').KEY_ENCRYPTION_KEY);
    const report = {
      tenants: 0,
      resealed: 0,
      alert_secrets_resealed: 0,
      tokens_on_older_keys: 0,
      legacy_tokens: 0,
    };
    let cursor: string | undefined;
    do {
      const page = await store.list(cursor, 100);
      for (const t of page.tenants) {
        const guard = guardFor(c.env, t.id);
        // The guard re-seals in its turn, so a key set meanwhile (PATCH) is never undone.
        const sealed = await guard.tenantRecord().reseal(t.id);
        if (sealed === 'not_found') continue;
        report.tenants++;
        if (sealed === 'resealed') report.resealed++;
        if (await guard.alerts().resealSecret()) report.alert_secrets_resealed++;
        const now = Date.now();
        for (const token of await guard.tokens().list(t.id, now)) {
          // Tokens that ended need no rotation.
          if (token.revoked_at || (token.expires_at && Date.parse(token.expires_at) <= now)) {
            continue;
          }
          if (!token.tag_kid) report.legacy_tokens++;
          else if (token.tag_kid !== ring.currentKid) report.tokens_on_older_keys++;
        }
      }
      cursor = page.cursor ?? undefined;
    } while (cursor);
    await audit(c, 'keys.resealed', { detail: report });
    return c.json(ok(report));
  });

  return app;
}
