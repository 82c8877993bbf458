/**
 * What `npm start` hands an MCP client (docs/MCP.md, "Try it"): one line of JSON in the
 * `mcpServers` form most clients read (Claude Desktop and Claude Code's `.mcp.json`,
 * Cursor, and others), pointing at the gateway's `/mcp` with a gateway token; and the
 * operations it declares in PLATFORM_OPERATIONS, so a declared operation is a tool
 * there too (the emulator answers both, emulator/dashboard.ts).
 */

/** The `mcpServers` entry for a gateway and token, as one line. */
export function mcpClientConfig(gatewayUrl: string, token: string): string {
  return JSON.stringify({
    mcpServers: {
      'agent-platform': {
        type: 'http',
        url: `${gatewayUrl}/mcp`,
        headers: { Authorization: `Bearer ${token}` },
      },
    },
  });
}

/** The local stack's PLATFORM_OPERATIONS: two dashboard operations no release knows. */
export const DEMO_OPERATIONS = {
  'product.list': {
    method: 'GET',
    path: '/dashboard/product/lists',
    credential: 'x-api-key',
    group: 'products',
    title: 'List products',
    description:
      'The products submitted for analysis (product.create), a page at a time, each with its ' +
      'status; `status` narrows them to pending or completed ones.',
    query: {
      type: 'object',
      properties: {
        page_num: { type: 'integer', minimum: 1, default: 1 },
        page_size: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
        status: { enum: ['all', 'pending', 'completed'] },
      },
    },
  },
  'product.rename': {
    method: 'POST',
    path: '/dashboard/product/rename/{product_id}',
    credential: 'x-api-key',
    group: 'products',
    title: 'Rename a product',
    description: 'Sets the `product_name` of the product `product_id` (from product.list).',
    body: {
      type: 'object',
      properties: { product_name: { type: 'string', minLength: 1, maxLength: 64 } },
      required: ['product_name'],
    },
  },
};
