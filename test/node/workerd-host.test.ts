/**
 * scripts/workerd-host.ts: the gateway as deploy builds it, and the bare
 * forwarding Worker, each on plain workerd (miniflare) in front of the
 * emulator. Free ports only, so this runs beside the other node tests.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PLATFORM_KEY } from '../../emulator/seed';
import { type RunningEmulator, startEmulator } from '../../emulator/server';
import {
  type GatewayHost,
  startBareWorker,
  startGateway,
  type WorkerHost,
} from '../../scripts/workerd-host';

let emulator: RunningEmulator;
let gateway: GatewayHost;
let bare: WorkerHost;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
  [gateway, bare] = await Promise.all([
    startGateway({ platformBaseUrl: emulator.url }),
    startBareWorker({ upstreamUrl: emulator.url, platformKey: DEMO_PLATFORM_KEY }),
  ]);
});
afterAll(async () => {
  await Promise.all([gateway?.stop(), bare?.stop()]);
  await emulator?.close();
});

describe('workerd host', () => {
  it('serves the gateway: a tenant created through the operator API reads /team/lists', async () => {
    expect(gateway.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const created = await fetch(`${gateway.url}/admin/tenants`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${gateway.adminToken}`,
        'content-type': 'application/json',
      },
      body: JSON.stringify({ name: 'Host test', platform_key: DEMO_PLATFORM_KEY }),
    });
    const body = (await created.json()) as { code: number; data: { token: string } };
    expect(created.status).toBe(201);
    expect(body.code).toBe(0);

    const res = await fetch(`${gateway.url}/team/lists`, {
      headers: { authorization: `Bearer ${body.data.token}` },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { code: number }).code).toBe(0);
  });

  it('serves the bare forwarding Worker on the same runtime', async () => {
    const res = await fetch(`${bare.url}/team/lists`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { code: number; data: { data: unknown[] } };
    expect(body.code).toBe(0);
    expect(body.data.data.length).toBeGreaterThan(0);
    expect((await fetch(`${bare.url}/nowhere`)).status).toBe(404);
  });

  it("also serves through Miniflare's entry Worker (via: 'entry')", async () => {
    const viaEntry = await startBareWorker({
      upstreamUrl: emulator.url,
      platformKey: DEMO_PLATFORM_KEY,
      via: 'entry',
    });
    try {
      const res = await fetch(`${viaEntry.url}/team/lists`);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { code: number }).code).toBe(0);
    } finally {
      await viaEntry.stop();
    }
  });

  it('captures what workerd prints, and it printed no warning', async () => {
    // The operator API logs one audit line per change, through workerd's stdout.
    expect(gateway.logs().some((l) => l.message.includes('audit.tenant.created'))).toBe(true);
    for (const host of [gateway, bare]) {
      const bad = host
        .logs()
        .filter(
          (l) =>
            /warn|error/.test(l.level) ||
            /different request context|uncaught|exception/i.test(l.message),
        );
      expect(bad).toEqual([]);
    }
  });
});
