/**
 * Token scopes, derived from the route table's groups: `<group>:read` for
 * GET routes and `<group>:write` for the others, plus `usage:read` (a
 * tenant's own usage, GET /usage) and `token:rotate` (a token rotating
 * itself, POST /token/rotate: only by explicit grant). API keys are platform secrets: their
 * routes need an explicit grant (no preset includes an `apikeys:` scope), and
 * only `apikeys:admin`, which implies read and write, sees `api_key` values
 * unmasked (docs/OPERATING.md, "Scopes").
 */
import { ROUTE_GROUPS, type RouteSpec } from '../routes/types';

/** A tenant's own usage and limits (GET /usage). */
export const USAGE_SCOPE = 'usage:read';

/** A token rotating itself (POST /token/rotate). */
export const ROTATE_SCOPE = 'token:rotate';

export const ALL_SCOPES: readonly string[] = [
  ...ROUTE_GROUPS.flatMap((g) => [`${g}:read`, `${g}:write`]),
  'apikeys:admin',
  USAGE_SCOPE,
  ROTATE_SCOPE,
];

/** Scopes that reach the platform's own API keys: never granted by a preset. */
export const isApiKeyScope = (scope: string) => scope.startsWith('apikeys:');

/**
 * Scopes only an explicit grant gives: the platform's API keys, and
 * self-rotation (a rotated token outlives the revocation of the one it
 * replaced, so an operator decides which tokens may make successors).
 */
export const isExplicitScope = (scope: string) => isApiKeyScope(scope) || scope === ROTATE_SCOPE;

/**
 * Named bundles an operator may grant instead of listing scopes. A Map, so a
 * caller's name such as `constructor` or `__proto__` is just an unknown name.
 */
export const PRESETS: ReadonlyMap<string, readonly string[]> = new Map([
  /** Everything but the platform's API keys and self-rotation (the default). */
  ['full', ALL_SCOPES.filter((s) => !isExplicitScope(s))],
  /** A partner that may look but not change anything. */
  ['read-only', ALL_SCOPES.filter((s) => !isExplicitScope(s) && s.endsWith(':read'))],
]);

/** Expands presets; returns the unknown names separately so callers can refuse them. */
export function expandScopes(names: readonly string[]): { scopes: string[]; unknown: string[] } {
  const scopes = new Set<string>();
  const unknown: string[] = [];
  for (const name of names) {
    const preset = PRESETS.get(name);
    if (preset) for (const scope of preset) scopes.add(scope);
    else if (ALL_SCOPES.includes(name)) scopes.add(name);
    else unknown.push(name);
  }
  return { scopes: [...scopes].sort(), unknown };
}

export function requiredScope(spec: Pick<RouteSpec, 'group' | 'method'>): string {
  return `${spec.group}:${spec.method === 'GET' ? 'read' : 'write'}`;
}

export function hasScope(granted: readonly string[], needed: string): boolean {
  if (granted.includes(needed)) return true;
  // apikeys:admin covers every API key operation.
  return isApiKeyScope(needed) && granted.includes('apikeys:admin');
}
