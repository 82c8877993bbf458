/**
 * The production layout of docs/DEPLOY.md ("The console behind Cloudflare
 * Access"), on plain workerd: the console Worker on its own socket, bound to
 * the gateway's OperatorApi entrypoint; the gateway with OPERATOR_API=binding.
 * The gateway verifies the Access JWT the console passes on, with the same
 * code as on its own hostname (the local Access stand-in signs it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PLATFORM_KEY } from '../../emulator/seed';
import { type RunningEmulator, startEmulator } from '../../emulator/server';
import {
  LOCAL_ADMIN_EMAIL,
  LOCAL_VIEWER_EMAIL,
  type LocalAccess,
  startLocalAccess,
} from '../../scripts/local-access';
import { type GatewayHost, startGateway } from '../../scripts/workerd-host';

let emulator: RunningEmulator;
let access: LocalAccess;
let gateway: GatewayHost;
let consoleUrl = '';

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
  access = await startLocalAccess();
  gateway = await startGateway({
    platformBaseUrl: emulator.url,
    console: true,
    vars: {
      OPERATOR_API: 'binding',
      PORTAL_ORIGIN: 'https://gw.example.com',
      ...access.vars,
    },
  });
  consoleUrl = gateway.consoleUrl ?? '';
}, 120_000);

afterAll(async () => {
  await gateway?.stop();
  await access?.close();
  await emulator?.close();
});

const asAccess = (jwt: string, init: RequestInit = {}) => ({
  ...init,
  headers: { 'cf-access-jwt-assertion': jwt, ...(init.headers as Record<string, string>) },
});

describe('console Worker over a Service Binding, OPERATOR_API=binding', () => {
  it('reaches the operator API with an Access JWT; the audit names the operator', async () => {
    const jwt = await access.mint({ email: LOCAL_ADMIN_EMAIL });
    const me = await fetch(`${consoleUrl}/admin/whoami`, asAccess(jwt));
    expect(me.status).toBe(200);
    // The settings the console shows (webhook targets) come along; the identity is what counts.
    expect(((await me.json()) as { data: unknown }).data).toMatchObject({
      actor: LOCAL_ADMIN_EMAIL,
      role: 'admin',
      via: 'access',
    });
    const created = await fetch(
      `${consoleUrl}/admin/tenants`,
      asAccess(jwt, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'via console', platform_key: DEMO_PLATFORM_KEY }),
      }),
    );
    expect(created.status).toBe(201);
    const audit = await fetch(`${consoleUrl}/admin/audit?action=tenant.created`, asAccess(jwt));
    const entries = ((await audit.json()) as { data: { data: { actor: string }[] } }).data.data;
    expect(entries[0]?.actor).toBe(LOCAL_ADMIN_EMAIL);
  });

  it('refuses a viewer’s change and a token signed by another key, through the console too', async () => {
    const viewer = await access.mint({ email: LOCAL_VIEWER_EMAIL });
    const change = await fetch(
      `${consoleUrl}/admin/tenants`,
      asAccess(viewer, {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
      }),
    );
    expect(change.status).toBe(403);
    expect(((await change.json()) as { code: number }).code).toBe(40304);
    const forged = await access.mint({ key: 'other' });
    const refused = await fetch(`${consoleUrl}/admin/whoami`, asAccess(forged));
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { code: number }).code).toBe(40105);
  });

  it('serves the console page and nothing of the platform API on the console host', async () => {
    const page = await fetch(`${consoleUrl}/`, { redirect: 'manual' });
    expect(page.status).toBe(302);
    expect(page.headers.get('location')).toBe(`${consoleUrl}/console/`);
    const platform = await fetch(`${consoleUrl}/team/lists`);
    expect(platform.status).toBe(404);
    expect(((await platform.json()) as { code: number }).code).toBe(40400);
  });

  it('refuses the operator API on the gateway’s own hostname, ADMIN_TOKEN included', async () => {
    const res = await fetch(`${gateway.url}/admin/whoami`, {
      headers: { authorization: `Bearer ${gateway.adminToken}` },
    });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { code: number }).code).toBe(40402);
    // The platform routes stay where they are.
    expect((await fetch(`${gateway.url}/team/lists`)).status).toBe(401);
  });
});
