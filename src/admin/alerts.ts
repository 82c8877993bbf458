/**
 * Operator API: a tenant's quota alerts. The webhook's signing secret is made
 * here and shown once, in the answer that sets it.
 */
import { Hono } from 'hono';
import * as z from 'zod';
import { GatewayError, invalidField } from '../errors';
import { validated } from '../middleware/validate';
import { DEFAULT_SERVER_ERROR_PERCENT, DEFAULT_THRESHOLDS } from '../objects/tenant/alerts/alerts';
import { keyRing, seal } from '../tenants/crypto';
import { randomBase62 } from '../tenants/token';
import type { HonoEnv } from '../types/context';
import type { AlertSet, AlertSettings, AlertTest, RecentAlert } from '../types/wire';
import {
  adminStores,
  audit,
  changeGuard,
  existingTenant,
  guardFor,
  ok,
  tenantParams,
} from './common';
import { webhookUrlProblem } from './webhook-url';

export const alertsBody = z.strictObject({
  url: z.url({ protocol: /^https?$/, error: 'url must be an http(s) URL' }).max(2048),
  thresholds: z
    .array(
      z
        .number()
        .int()
        .min(1, 'thresholds are percents from 1 to 100')
        .max(100, 'thresholds are percents from 1 to 100'),
    )
    .min(1)
    .max(10)
    .default(DEFAULT_THRESHOLDS),
  /** An hour whose server errors reach this share of its requests raises an alert. */
  server_error_percent: z
    .number()
    .int()
    .min(1, 'server_error_percent is a percent from 1 to 100')
    .max(100, 'server_error_percent is a percent from 1 to 100')
    .default(DEFAULT_SERVER_ERROR_PERCENT),
});

export function alertRoutes(): Hono<HonoEnv> {
  const app = new Hono<HonoEnv>();

  app.put(
    '/:id/alerts',
    validated('param', tenantParams),
    validated('json', alertsBody),
    async (c) => {
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
      await audit(c, 'alerts.set', {
        tenant_id: id,
        detail: {
          origin: new URL(body.url).origin,
          thresholds,
          server_error_percent: serverErrorPercent,
        },
      });
      return c.json(
        ok<AlertSet>({
          url: body.url,
          thresholds,
          server_error_percent: serverErrorPercent,
          secret,
        }),
      );
    },
  );

  app.get('/:id/alerts', validated('param', tenantParams), async (c) => {
    const { id } = c.req.valid('param');
    await existingTenant(await adminStores(c), id);
    const settings = await guardFor(c.env, id).alerts().settings();
    // A webhook URL may carry the receiver's credentials: a viewer sees its origin only.
    if (settings && c.get('operator')?.role === 'viewer') {
      return c.json(ok<AlertSettings>({ ...settings, url: `${new URL(settings.url).origin}/…` }));
    }
    return c.json(ok<AlertSettings | null>(settings));
  });

  // A signed test delivery, sent at once and not retried, so an operator can
  // check the receiver (and its signature check) before a quota is crossed.
  app.post('/:id/alerts/test', validated('param', tenantParams), async (c) => {
    const { id } = c.req.valid('param');
    await existingTenant(await adminStores(c), id);
    const delivery = await guardFor(c.env, id).alerts().test();
    if (!delivery) {
      throw new GatewayError('RESOURCE_NOT_FOUND', { message: 'No alert webhook is set' });
    }
    const { status, failure, ms } = delivery;
    const delivered = status !== null && status >= 200 && status < 300;
    await audit(c, 'alerts.tested', { tenant_id: id, detail: { status, delivered, failure } });
    return c.json(ok<AlertTest>({ delivered, status, failure, ms }));
  });

  // What the guard raised, webhook or not: the console's alert log of the tenant.
  app.get('/:id/alerts/recent', validated('param', tenantParams), async (c) => {
    const { id } = c.req.valid('param');
    await existingTenant(await adminStores(c), id);
    const alerts: RecentAlert[] = await guardFor(c.env, id).alerts().recent();
    return c.json(ok({ alerts }));
  });

  app.delete('/:id/alerts', validated('param', tenantParams), async (c) => {
    const { id } = c.req.valid('param');
    await existingTenant(await adminStores(c), id);
    await changeGuard(c, id, (g) => g.alerts().set(null));
    await audit(c, 'alerts.removed', { tenant_id: id });
    return c.json(ok(null));
  });

  return app;
}
