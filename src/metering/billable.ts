/**
 * What is billable (docs/BILLING.md, "What is billable"). A billable request is a data
 * request the limiter admitted: a platform operation, as a route or an MCP tool call,
 * the browser-token mint and the session event stream. The self-service surface is not:
 * a token reading or rotating itself (the partner portal's calls), its own API
 * document, MCP discovery (initialize, ping, tools/list, server/discover: the `/mcp`
 * requests that are not a tool call), the OAuth endpoints and the partner's own apps and
 * keys (`/partner/*`: approving, listing and revoking them). Those
 * spend no data quota and no rate policy of the tenant's: they have their own meter
 * (`self-service`, docs/LIMITS.md "Self-service reads"), so a security action such as
 * rotating one's own token is never refused because the data quota is spent. Operators
 * see both in the usage history, labelled (`billable`, `self_service`).
 */

/** Operation ids of the self-service surface. */
export const SELF_SERVICE_OPERATIONS: ReadonlySet<string> = new Set([
  'token.own',
  'token.rotate',
  'usage',
  'usage.requests',
  'openapi',
  'docs',
  'mcp',
]);

/** OAuth's endpoints (`oauth.*`) and the partner's apps and keys (`partner.*`): all self-service. */
const SELF_SERVICE_PREFIXES = ['oauth.', 'partner.'] as const;

export function isSelfService(operation: string): boolean {
  return (
    SELF_SERVICE_OPERATIONS.has(operation) ||
    SELF_SERVICE_PREFIXES.some((prefix) => operation.startsWith(prefix))
  );
}

/**
 * Whether a finished request is billable: a data operation that the limiter admitted,
 * or that went to the platform while the limiter was unreachable and failed open.
 */
export function isBillable(
  operation: string,
  limiter: { result: 'admitted' | 'refused' | 'unavailable' } | undefined,
  forwarded: boolean,
): boolean {
  if (isSelfService(operation) || !limiter) return false;
  return limiter.result === 'admitted' || (limiter.result === 'unavailable' && forwarded);
}
