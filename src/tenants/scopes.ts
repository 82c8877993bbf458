/**
 * Token scopes, derived from the route table's groups: `<group>:read` for
 * GET routes and `<group>:write` for the others. API keys are platform
 * secrets, so they have a third scope: `apikeys:admin` implies read and
 * write and is the only one that sees `api_key` values unmasked.
 */
import { ROUTE_GROUPS, type RouteSpec } from '../routes/types';

export const ALL_SCOPES: readonly string[] = [
  ...ROUTE_GROUPS.flatMap((g) => [`${g}:read`, `${g}:write`]),
  'apikeys:admin',
];

/** Named bundles an operator may grant instead of listing scopes. */
export const PRESETS: Record<string, readonly string[]> = {
  full: ALL_SCOPES,
  /** A partner that may look but not change anything, and never sees platform secrets. */
  'read-only': ROUTE_GROUPS.filter((g) => g !== 'apikeys').map((g) => `${g}:read`),
};

/** Expands presets; returns the unknown names separately so callers can refuse them. */
export function expandScopes(names: readonly string[]): { scopes: string[]; unknown: string[] } {
  const scopes = new Set<string>();
  const unknown: string[] = [];
  for (const name of names) {
    const preset = PRESETS[name];
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
  return needed.startsWith('apikeys:') && granted.includes('apikeys:admin');
}
