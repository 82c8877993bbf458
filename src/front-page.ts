/**
 * GET /: the gateway's front page, for a person who typed its address: where the API
 * reference, the partner portal and the operator console are. One small HTML page of
 * links under a CSP that allows nothing else (no script, no style, no frame).
 */
import type { Context } from 'hono';
import type { HonoEnv } from './types/context';

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<title>Agent Platform gateway</title>
</head>
<body>
<main>
<h1>Agent Platform gateway</h1>
<p>This gateway serves the Agent Platform's API to its partners, each with its own gateway token.</p>
<ul>
<li><a href="/docs">API reference</a>: every operation, tried with your token (<a href="/openapi.json">the OpenAPI document</a>)</li>
<li><a href="/portal/">Partner portal</a>: your token's usage, quotas and recent refusals</li>
<li><a href="/console/">Operator console</a>: tenants, tokens, limits and usage, for the gateway's operators</li>
</ul>
</main>
</body>
</html>
`;

export function frontPage(c: Context<HonoEnv>): Response {
  return c.html(PAGE, 200, {
    'Content-Security-Policy':
      "default-src 'none'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'no-cache',
  });
}
