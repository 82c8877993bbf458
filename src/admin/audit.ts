/** Operator API: the audit log (newest first, paged) and key maintenance (audit.contract.ts). */
import { auditLog } from '../objects/audit/audit-log';
import { keyRing } from '../tenants/crypto';
import type { AuditPage } from '../types/wire';
import * as contract from './audit.contract';
import { adminStores, audit, guardFor } from './common';
import { type AdminApp, handle } from './handle';

export function auditRoutes(app: AdminApp): void {
  handle(app, contract.listAudit, async (c) => {
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
    return page;
  });

  // After putting a new key first in KEY_ENCRYPTION_KEY: re-seal every stored
  // platform key and webhook secret under it, and count the tokens that still
  // depend on an older key (their tag) or on none (legacy): rotate those
  // before the old key is removed (docs/SECURITY.md, "Gateway tokens").
  handle(app, contract.reencryptKeys, async (c, op) => {
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
    await audit(c, op.audit, { detail: report });
    return report;
  });
}
