/**
 * The scopes a token may be given come from the gateway (GET /admin/operations:
 * the built-in groups and any an operator declared in PLATFORM_OPERATIONS), so
 * a group added later shows up without a console release. `apikeys:*` reach the
 * platform's own API keys: the picker never preselects them and warns when one
 * is chosen.
 */
export const isApiKeyScope = (scope: string) => scope.startsWith('apikeys:');
