/**
 * The scopes a token may be given (src/tenants/scopes.ts; a test checks the
 * two lists match). `apikeys:*` reach the platform's own API keys: the picker
 * never preselects them and warns when one is chosen.
 */
export const PRESETS = ['full', 'read-only'] as const;
const GROUPS = ['apikeys', 'calls', 'teams', 'agents', 'sessions', 'browsers'];
export const SCOPES: readonly string[] = [
  ...GROUPS.flatMap((g) => [`${g}:read`, `${g}:write`]),
  'apikeys:admin',
  'usage:read',
  // A token rotating itself (POST /token/rotate, the partner portal): explicit grant only.
  'token:rotate',
];
export const isApiKeyScope = (scope: string) => scope.startsWith('apikeys:');
