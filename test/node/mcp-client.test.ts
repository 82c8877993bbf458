/**
 * An official MCP client (@modelcontextprotocol/client 2.x, the TypeScript SDK) against
 * `npm start`'s gateway (scripts/stack.ts: wrangler dev and the emulator, on free ports,
 * with npm start's declared operations), configured from the line npm start prints: in
 * each era, it lists the tools (every page) and calls team.list, a session operation and
 * a declared operation, and reads a validation failure as a tool error.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_PLATFORM_KEY } from '../../emulator/seed';
import { DEMO_OPERATIONS, mcpClientConfig } from '../../scripts/mcp-config';
import { createTenant, type Stack } from '../../scripts/stack';
import { freshStack } from './fresh-stack';

const STATE = '.wrangler/mcp-client-test-state';
let stack: Stack;
let server: { url: string; headers: Record<string, string> };

beforeAll(async () => {
  stack = await freshStack(STATE, { PLATFORM_OPERATIONS: JSON.stringify(DEMO_OPERATIONS) });
  const { token } = await createTenant(stack, 'mcp client', DEMO_PLATFORM_KEY);
  // What npm start prints, as a client reads it.
  const config = JSON.parse(mcpClientConfig(stack.gatewayUrl, token));
  server = config.mcpServers['agent-platform'];
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

type Mode = 'legacy' | { pin: '2026-07-28' };

async function connected(mode: Mode): Promise<Client> {
  const client = new Client(
    { name: 'gateway-test', version: '1.0.0' },
    { versionNegotiation: { mode } },
  );
  const transport = new StreamableHTTPClientTransport(new URL(server.url), {
    requestInit: { headers: server.headers },
  });
  await client.connect(transport);
  return client;
}

async function everyTool(client: Client) {
  const tools = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}

describe.each<[string, Mode, string, string]>([
  ['2025-era (initialize)', 'legacy', 'legacy', '2025-11-25'],
  ['2026-07-28 (stateless)', { pin: '2026-07-28' }, 'modern', '2026-07-28'],
])('the official MCP client, %s', (_era, mode, era, version) => {
  it('lists the tools and calls team.list, a session operation and a declared operation', async () => {
    const client = await connected(mode);
    try {
      expect(client.getProtocolEra()).toBe(era);
      expect(client.getNegotiatedProtocolVersion()).toBe(version);
      expect(client.getInstructions()).toContain('request_id');
      const tools = await everyTool(client);
      const names = tools.map((t) => t.name);
      for (const name of ['team.list', 'session.create', 'session.info', 'product.list'])
        expect(names).toContain(name);
      expect(tools.find((t) => t.name === 'product.list')?.title).toBe('List products');

      const teams = await client.callTool({ name: 'team.list', arguments: { page_size: 2 } });
      expect(teams.isError).toBeFalsy();
      const page = teams.structuredContent as { page_size: number; data: { team_id: string }[] };
      expect(page.page_size).toBe(2);
      const teamId = page.data[0]?.team_id;

      const created = await client.callTool({
        name: 'session.create',
        arguments: { team_id: teamId, task: 'Find travel planners', title: 'From an agent' },
      });
      const sessionId = (created.structuredContent as { session_id: string }).session_id;
      expect(sessionId).toEqual(expect.any(String));
      const info = await client.callTool({
        name: 'session.info',
        arguments: { session_id: sessionId },
      });
      expect((info.structuredContent as { session_id: string }).session_id).toBe(sessionId);

      const products = await client.callTool({
        name: 'product.list',
        arguments: { status: 'all' },
      });
      expect(products.isError).toBeFalsy();
      expect(JSON.parse((products.content as { text: string }[])[0]?.text ?? '')).toMatchObject({
        page_num: 1,
      });

      const refused = await client.callTool({ name: 'team.info', arguments: { team_id: 'nope' } });
      expect(refused.isError).toBe(true);
      expect((refused.content as { text: string }[])[0]?.text).toMatch(
        /^Error 40001: team_id must be a UUID \(request_id [^)]+\)\./,
      );
    } finally {
      await client.close();
    }
  });
});
