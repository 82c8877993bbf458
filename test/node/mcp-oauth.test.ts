/**
 * An official MCP client (@modelcontextprotocol/client 2.x) connects to the gateway's
 * /mcp through OAuth discovery alone (docs/OAUTH.md): it is given the server's URL and an
 * OAuth client provider, no token. Its first request gets 401 with the resource metadata's
 * address; it discovers the authorization server, registers itself (RFC 7591), and sends
 * the partner to the authorization URL with PKCE S256 and the /mcp resource. This test is
 * the partner: it follows the redirect to the portal and approves, as the portal's page
 * does. The client then exchanges the code, and lists and calls tools in both eras. The
 * gateway is the built Worker on plain workerd, in front of the emulator.
 */
import {
  Client,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PLATFORM_KEY } from '../../emulator/seed';
import { type RunningEmulator, startEmulator } from '../../emulator/server';
import { type GatewayHost, startGateway } from '../../scripts/workerd-host';
import { operatorCall } from './operator-call';

let emulator: RunningEmulator;
let gateway: GatewayHost;
let tenantId = '';

/** A GET without a body, a POST with one. */
const adminCall = (path: string, body?: unknown): Promise<any> =>
  operatorCall(gateway, body === undefined ? 'GET' : 'POST', path, body);

/** What a desktop agent keeps: its registration, tokens, verifier and discovery, in memory. */
class MemoryProvider implements OAuthClientProvider {
  client?: StoredOAuthClientInformation;
  saved?: StoredOAuthTokens;
  verifier = '';
  discovery?: OAuthDiscoveryState;
  authorizationUrl?: URL;
  readonly expectedState = crypto.randomUUID();

  get redirectUrl() {
    return 'http://127.0.0.1:33418/callback';
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Gateway test agent',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state() {
    return this.expectedState;
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: StoredOAuthClientInformation) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: StoredOAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
}

/** The partner's part, as the portal does it: follow the redirect, approve, return the answer. */
async function partnerApproves(authorizationUrl: URL): Promise<URL> {
  const res = await fetch(authorizationUrl, { redirect: 'manual' });
  expect(res.status).toBe(302);
  const location = new URL(res.headers.get('location') ?? '');
  expect(location.pathname).toBe('/portal/');
  const request = location.hash.replace(/^#authorize=/, '');
  const link = await adminCall(`/tenants/${tenantId}/portal-links`, { manage: true });
  const partner = new URL(link.url).hash.replace(/^#token=/, '');
  const auth = { authorization: `Bearer ${partner}`, 'content-type': 'application/json' };
  const view = (await (
    await fetch(`${gateway.url}/oauth/consent?request=${encodeURIComponent(request)}`, {
      headers: auth,
    })
  ).json()) as { data: { client: { name: string }; resource: string } };
  expect(view.data.client.name).toBe('Gateway test agent');
  expect(view.data.resource).toBe(`${gateway.url}/mcp`);
  const decided = (await (
    await fetch(`${gateway.url}/oauth/consent`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ request, approve: true }),
    })
  ).json()) as { data: { redirect_to: string } };
  return new URL(decided.data.redirect_to);
}

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
  gateway = await startGateway({ platformBaseUrl: emulator.url });
  tenantId = (await adminCall('/tenants', { name: 'Agents Inc', platform_key: DEMO_PLATFORM_KEY }))
    .tenant_id;
}, 120_000);

afterAll(async () => {
  await gateway?.stop();
  await emulator?.close();
});

type Mode = 'legacy' | { pin: '2026-07-28' };
const provider = new MemoryProvider();

function connect(mode: Mode) {
  const client = new Client(
    { name: 'gateway-test', version: '1.0.0' },
    { versionNegotiation: { mode } },
  );
  const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), {
    authProvider: provider,
  });
  return { client, transport, connected: client.connect(transport) };
}

describe('the official MCP client through OAuth discovery', () => {
  it('discovers, registers, is sent to consent, and exchanges the code', async () => {
    const first = connect('legacy');
    await expect(first.connected).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.client?.client_id).toMatch(/^cli_/);
    const url = provider.authorizationUrl;
    expect(url?.origin).toBe(gateway.url);
    expect(url?.pathname).toBe('/oauth/authorize');
    expect(url?.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url?.searchParams.get('resource')).toBe(`${gateway.url}/mcp`);
    const answer = await partnerApproves(url as URL);
    expect(answer.searchParams.get('state')).toBe(provider.expectedState);
    await first.transport.finishAuth(answer.searchParams);
    expect(provider.saved?.access_token).toMatch(/^apgw_/);
    expect(provider.saved?.refresh_token).toMatch(/^apgr_/);
    await first.client.close();
  });

  it.each<[string, Mode]>([
    ['2025-era (initialize)', 'legacy'],
    ['2026-07-28 (stateless)', { pin: '2026-07-28' }],
  ])('then lists the tools and calls team.list, %s', async (_, mode) => {
    const { client, connected } = connect(mode);
    await connected;
    try {
      const { tools } = await client.listTools();
      expect(tools.length).toBeGreaterThan(0);
      const teams = await client.callTool({ name: 'team.list', arguments: { page_size: 1 } });
      expect(teams.isError).toBeFalsy();
      expect((teams.structuredContent as { page_size: number }).page_size).toBe(1);
    } finally {
      await client.close();
    }
  });

  it('its token is bound to /mcp: the API refuses it', async () => {
    const res = await fetch(`${gateway.url}/team/lists`, {
      headers: { authorization: `Bearer ${provider.saved?.access_token}` },
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('error="invalid_token"');
  });
});
