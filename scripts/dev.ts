/**
 * `npm start`: the gateway on http://127.0.0.1:8787 in front of the local
 * platform emulator (with two declared operations, scripts/mcp-config.ts), with a demo
 * tenant whose token is printed with a one-line MCP client configuration, the browser
 * demo page on http://127.0.0.1:8791, and a local stand-in for Cloudflare
 * Access on http://127.0.0.1:8792 that signs operators in to /console
 * (docs/CONSOLE.md, "Access"). The terminal stays quiet: no line per request unless
 * `npm start -- --requests` (one short line each) or `--verbose` (everything), and Enter
 * prints the banner again (docs/RUNNING.md).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { startDemo } from '../demo/server';
import { DEMO_PLATFORM_KEY, OTHER_PLATFORM_KEY } from '../emulator/seed';
import { adminClient, segments } from '../ui/lib/admin-client';
import { type DevOutput, devLine } from './dev-output';
import { portsInsideEphemeral, portsInUse } from './free-port';
import { LOCAL_ADMIN_EMAIL, LOCAL_VIEWER_EMAIL, startLocalAccess } from './local-access';
import { DEFAULT_LOCAL_URL, forgetLocalGateway, noteLocalGateway } from './local-gateway';
import { DEMO_OPERATIONS, mcpClientConfig } from './mcp-config';
import { createTenant, type Stack, startStack } from './stack';

const GATEWAY_PORT = Number(process.env.PORT ?? 8787);
const EMULATOR_PORT = Number(process.env.EMULATOR_PORT ?? 8790);
const DEMO_PAGE_PORT = Number(process.env.DEMO_PORT ?? 8791);
const ACCESS_PORT = Number(process.env.ACCESS_PORT ?? 8792);
const DEMO_FILE = '.dev/demo-tenant.json';
const { values: flags } = parseArgs({
  options: { requests: { type: 'boolean' }, verbose: { type: 'boolean' } },
});
const OUTPUT: DevOutput = flags.verbose ? 'verbose' : flags.requests ? 'requests' : 'quiet';

const PORTS = { PORT: GATEWAY_PORT, EMULATOR_PORT, DEMO_PORT: DEMO_PAGE_PORT, ACCESS_PORT };
// Every port first, so a taken one is named with its setting instead of a stack trace later.
const taken = await portsInUse(PORTS);
if (taken) {
  console.error(`error: ${taken}`);
  process.exit(1);
}
// The defaults lie below the kernel's ephemeral range; a port set inside it may be taken.
for (const warning of portsInsideEphemeral(PORTS)) console.warn(`warning: ${warning}`);

// The same verification code as in production; only the team domain is this loopback server.
const access = await startLocalAccess({ port: ACCESS_PORT });
const stack = await startStack({
  gatewayPort: GATEWAY_PORT,
  emulatorPort: EMULATOR_PORT,
  vars: {
    ...access.vars,
    // Declared operations are tools too (MCP): the emulator answers these.
    PLATFORM_OPERATIONS: JSON.stringify(DEMO_OPERATIONS),
  },
  output: (line) => {
    const shown = devLine(line, OUTPUT);
    if (shown !== null) console.log(shown);
  },
});
// The CLI in another terminal finds this gateway, whatever its PORT.
noteLocalGateway(stack.gatewayUrl);
const shutdown = async () => {
  forgetLocalGateway();
  await Promise.all([stack.stop(), access.close()]);
  process.exit(0);
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
process.on('SIGHUP', shutdown);

const demo = await demoTenant(stack);
const page = await demoPage(stack, demo);
const cliUrl =
  stack.gatewayUrl === DEFAULT_LOCAL_URL ? '' : ` (elsewhere: --url ${stack.gatewayUrl})`;
const requestLines = {
  quiet: 'No line per request: npm start -- --requests for one each, --verbose for everything.',
  requests: 'One line per request (npm start without --requests for none).',
  verbose: 'Everything wrangler and the Worker print, as it comes.',
}[OUTPUT];
const banner = `
  Gateway:   ${stack.gatewayUrl}   (platform emulator at ${stack.emulatorUrl})
  Demo tenant ${demo.tenant_id}, token:

    ${demo.token}

  Try:
    curl -H "Authorization: Bearer ${demo.token}" ${stack.gatewayUrl}/team/lists
  API reference (try calls with the token above): ${stack.gatewayUrl}/docs
    OpenAPI document: ${stack.gatewayUrl}/openapi.json
  Browser demo (browser tokens, CORS, live session events): ${page}
  Operator console: ${stack.gatewayUrl}/console/   sign in (local Access) as
    admin:  ${access.loginUrl('admin', `${stack.gatewayUrl}/console/`)}   (${LOCAL_ADMIN_EMAIL})
    viewer: ${access.loginUrl('viewer', `${stack.gatewayUrl}/console/`)}   (${LOCAL_VIEWER_EMAIL})
  Partner portal: ${stack.gatewayUrl}/portal/   (sign in with the token above)
  MCP (agents): ${stack.gatewayUrl}/mcp   one-line client configuration (docs/MCP.md):
    ${mcpClientConfig(stack.gatewayUrl, demo.token)}
  Operator CLI: npm run admin -- --help   (run here, it finds this gateway${cliUrl};
    the operator token ADMIN_TOKEN is in .dev.vars)
  Usage events (docs/BILLING.md), one per billable request, at the local sink:
    ${stack.emulatorUrl}/__emulator/usage/main
  Emulator platform keys, for more tenants: ${DEMO_PLATFORM_KEY} (account Demo),
    ${OTHER_PLATFORM_KEY} (account Other)
  ${requestLines}
  Enter shows this again. Ctrl-C stops everything.
`;
console.log(banner);
createInterface({ input: process.stdin }).on('line', () => console.log(banner));

/**
 * The browser demo on its own origin, which the demo tenant allows, as it
 * allows the gateway's own (the /docs page's calls that carry an Origin).
 */
async function demoPage(s: Stack, tenant: { tenant_id: string; token: string }): Promise<string> {
  const origin = `http://127.0.0.1:${DEMO_PAGE_PORT}`;
  const admin = adminClient(s.gatewayUrl, { headers: { authorization: `Bearer ${s.adminToken}` } });
  const res = await admin.tenants[':id'].$patch({
    param: segments({ id: tenant.tenant_id }),
    // The docs page's own origin, under either name a browser may use for it.
    json: { cors_origins: [origin, s.gatewayUrl, s.gatewayUrl.replace('127.0.0.1', 'localhost')] },
  });
  if (!res.ok) throw new Error(`could not allow the demo origin: HTTP ${res.status}`);
  return (
    await startDemo({ port: DEMO_PAGE_PORT, gatewayUrl: s.gatewayUrl, tenantToken: tenant.token })
  ).url;
}

/** Reuses the demo tenant from the last run while its token still works, else makes one. */
async function demoTenant(s: Stack): Promise<{ tenant_id: string; token: string }> {
  if (existsSync(DEMO_FILE)) {
    const saved = JSON.parse(readFileSync(DEMO_FILE, 'utf8')) as {
      tenant_id: string;
      token: string;
    };
    const res = await fetch(`${s.gatewayUrl}/team/lists?page_size=1`, {
      headers: { authorization: `Bearer ${saved.token}` },
    });
    if (res.ok) return saved;
  }
  const created = await createTenant(s, 'Demo tenant', DEMO_PLATFORM_KEY);
  mkdirSync('.dev', { recursive: true });
  writeFileSync(DEMO_FILE, JSON.stringify(created, null, 2), { mode: 0o600 });
  return created;
}
