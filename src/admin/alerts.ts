/**
 * Operator API: a tenant's quota alerts (their definitions: alerts.contract.ts). The
 * webhook's signing secret is made here and shown once, in the answer that sets it.
 */
import { GatewayError, invalidField } from '../errors';
import { keyRing, seal } from '../tenants/crypto';
import { randomBase62 } from '../tenants/token';
import type { RecentAlert } from '../types/wire';
import * as contract from './alerts.contract';
import { adminStores, audit, changeGuard, existingTenant, guardFor } from './common';
import { type AdminApp, handle } from './handle';
import { webhookUrlProblem } from './webhook-url';

export function alertRoutes(app: AdminApp): void {
  handle(app, contract.setAlerts, async (c, op) => {
    const { id } = c.req.valid('param');
    const body = c.req.valid('json');
    const settings = c.get('settings');
    const problem = webhookUrlProblem(body.url, settings.WEBHOOK_LOCAL_TARGETS);
    if (problem) throw invalidField('body', 'url', problem);
    await existingTenant(await adminStores(c), id);
    const secret = `whsec_${randomBase62(32)}`;
    // Stored sealed, as platform keys are: the guard opens it to sign each delivery.
    const sealed = await seal(await keyRing(settings.KEY_ENCRYPTION_KEY), secret, id);
    const thresholds = [...new Set(body.thresholds)].sort((a, b) => a - b);
    const serverErrorPercent = body.server_error_percent;
    await changeGuard(c, id, (g) =>
      g.alerts().set({
        tenantId: id,
        url: body.url,
        thresholds,
        serverErrorPercent,
        secret: sealed,
      }),
    );
    // The URL may carry credentials of the receiver: the audit keeps its origin only.
    await audit(c, op.audit, {
      tenant_id: id,
      detail: {
        origin: new URL(body.url).origin,
        thresholds,
        server_error_percent: serverErrorPercent,
      },
    });
    return {
      url: body.url,
      thresholds,
      server_error_percent: serverErrorPercent,
      secret,
    };
  });

  handle(app, contract.getAlerts, async (c) => {
    const { id } = c.req.valid('param');
    await existingTenant(await adminStores(c), id);
    const settings = await guardFor(c.env, id).alerts().settings();
    // A webhook URL may carry the receiver's credentials: a viewer sees its origin only.
    if (settings && c.get('operator')?.role === 'viewer') {
      return { ...settings, url: `${new URL(settings.url).origin}/…` };
    }
    return settings;
  });

  // A signed test delivery, sent at once and not retried, so an operator can
  // check the receiver (and its signature check) before a quota is crossed.
  handle(app, contract.testAlert, async (c, op) => {
    const { id } = c.req.valid('param');
    await existingTenant(await adminStores(c), id);
    const delivery = await guardFor(c.env, id).alerts().test();
    if (!delivery) {
      throw new GatewayError('RESOURCE_NOT_FOUND', { message: 'No alert webhook is set' });
    }
    const { status, failure, ms } = delivery;
    const delivered = status !== null && status >= 200 && status < 300;
    await audit(c, op.audit, { tenant_id: id, detail: { status, delivered, failure } });
    return { delivered, status, failure, ms };
  });

  // What the guard raised, webhook or not: the console's alert log of the tenant.
  handle(app, contract.recentAlerts, async (c) => {
    const { id } = c.req.valid('param');
    await existingTenant(await adminStores(c), id);
    const alerts: RecentAlert[] = await guardFor(c.env, id).alerts().recent();
    return { alerts };
  });

  handle(app, contract.removeAlerts, async (c, op) => {
    const { id } = c.req.valid('param');
    await existingTenant(await adminStores(c), id);
    await changeGuard(c, id, (g) => g.alerts().set(null));
    await audit(c, op.audit, { tenant_id: id });
    return null;
  });
}
