/**
 * Token scopes, derived from the operation groups: `<group>:read` for GET operations
 * and `<group>:write` for the others, plus `usage:read` (a tenant's own usage,
 * GET /usage) and `token:rotate` (a token rotating itself, POST /token/rotate:
 * only by explicit grant). API keys are platform secrets: their operations need an
 * explicit grant (no preset reaches an `apikeys:` scope), and only
 * `apikeys:admin`, which implies read and write, sees `api_key` values unmasked
 * (docs/OPERATING.md, "Scopes").
 *
 * A preset (`full`, `read-only`) is stored by its name and read when a token is
 * checked, so it reaches groups that appear after the token was issued (a
 * release's, or an operator's declared operations). Tokens issued before that
 * hold the preset's scopes as a list: a list that is exactly what a preset gave
 * then (beside explicit-only scopes) counts as the preset (docs/OPERATING.md,
 * "Presets follow new groups").
 */

import { oncePer } from '../once-per';
import { OPERATION_GROUPS } from '../operations/groups';
import type { PlatformOperation } from '../types/operations';

/** A tenant's own usage and limits (GET /usage). */
export const USAGE_SCOPE = 'usage:read';

/** A token rotating itself (POST /token/rotate). */
export const ROTATE_SCOPE = 'token:rotate';

/**
 * A partner managing its own apps and keys in the portal (OAuth consent, its grants, its
 * keys: docs/OAUTH.md). Only an explicit grant gives it (a portal link may carry it), and
 * no grant or partner key ever holds it.
 */
export const PARTNER_SCOPE = 'partner:manage';

/** Every scope there is for these operation groups. */
export function scopesOf(groups: readonly string[]): string[] {
  return [
    ...groups.flatMap((g) => [`${g}:read`, `${g}:write`]),
    'apikeys:admin',
    USAGE_SCOPE,
    ROTATE_SCOPE,
    PARTNER_SCOPE,
  ];
}

/** The scopes of the built-in groups (declared operations may add groups: catalog.groups). */
export const ALL_SCOPES: readonly string[] = scopesOf(OPERATION_GROUPS);

/** Scopes that reach the platform's own API keys: never granted by a preset. */
export const isApiKeyScope = (scope: string) => scope.startsWith('apikeys:');

/**
 * Scopes only an explicit grant gives: the platform's API keys, self-rotation
 * (a rotated token outlives the revocation of the one it replaced, so an
 * operator decides which tokens may make successors), and managing a partner's
 * apps and keys.
 */
export const isExplicitScope = (scope: string) =>
  isApiKeyScope(scope) || scope === ROTATE_SCOPE || scope === PARTNER_SCOPE;

const GROUP_SCOPE = /^[a-z][a-z0-9_]*:(read|write)$/;

/**
 * Named bundles an operator may grant instead of listing scopes, as rules over
 * any scope, so they follow new groups. A Map, so a caller's name such as
 * `constructor` or `__proto__` is just an unknown name.
 */
const PRESET_RULES: ReadonlyMap<string, (scope: string) => boolean> = new Map([
  /** Everything but the platform's API keys and self-rotation (the default). */
  ['full', (s: string) => GROUP_SCOPE.test(s) && !isExplicitScope(s)],
  /** A partner that may look but not change anything. */
  ['read-only', (s: string) => GROUP_SCOPE.test(s) && !isExplicitScope(s) && s.endsWith(':read')],
]);

export const PRESET_NAMES: readonly string[] = [...PRESET_RULES.keys()];

/** What a preset grants over these groups, listed (a browser token's scopes, the docs). */
export function presetScopes(name: string, groups: readonly string[] = OPERATION_GROUPS): string[] {
  const rule = PRESET_RULES.get(name);
  return rule ? scopesOf(groups).filter(rule) : [];
}

/**
 * A grant as an operator asks for it, checked against the scopes these groups have:
 * presets kept by name, other scopes kept unless a preset asked for already gives them.
 * Unknown names come back separately so callers can refuse them.
 */
export function grantScopes(
  names: readonly string[],
  groups: readonly string[] = OPERATION_GROUPS,
): { scopes: string[]; unknown: string[] } {
  const known = new Set(scopesOf(groups));
  const presets = PRESET_NAMES.filter((p) => names.includes(p));
  const unknown = names.filter((n) => !PRESET_RULES.has(n) && !known.has(n));
  const explicit = names.filter(
    (n) => known.has(n) && !presets.some((p) => PRESET_RULES.get(p)?.(n)),
  );
  return { scopes: [...presets, ...[...new Set(explicit)].sort()], unknown };
}

/** Presets expanded over these groups: the listed scopes a grant asks for, for a browser token. */
export function expandScopes(
  names: readonly string[],
  groups: readonly string[] = OPERATION_GROUPS,
): { scopes: string[]; unknown: string[] } {
  const { scopes, unknown } = grantScopes(names, groups);
  const listed = new Set(
    scopes.flatMap((s) => (PRESET_RULES.has(s) ? presetScopes(s, groups) : [s])),
  );
  return { scopes: [...listed].sort(), unknown };
}

export function requiredScope(op: Pick<PlatformOperation, 'group' | 'method'>): string {
  return `${op.group}:${op.method === 'GET' ? 'read' : 'write'}`;
}

export function hasScope(granted: readonly string[], needed: string): boolean {
  const grant = grantOf(granted);
  if (grant.scopes.has(needed)) return true;
  // apikeys:admin covers every API key operation.
  if (isApiKeyScope(needed)) return grant.scopes.has('apikeys:admin');
  for (const preset of grant.presets) if (PRESET_RULES.get(preset)?.(needed)) return true;
  return false;
}

/**
 * What presets gave before groups followed them: the six groups they expanded over
 * until 0.3 (products and reports came later), read when a stored list is checked.
 */
const EARLIER_GROUPS = ['apikeys', 'calls', 'teams', 'agents', 'sessions', 'browsers'];
const EARLIER_PRESETS = PRESET_NAMES.map((name) => ({
  name,
  scopes: presetScopes(name, EARLIER_GROUPS),
}));

interface Grant {
  scopes: ReadonlySet<string>;
  presets: readonly string[];
}

/** A stored scope list as a grant, once per list (token records are memoized per isolate). */
const grantOf = oncePer((granted: readonly string[]): Grant => {
  const scopes = new Set(granted);
  const presets = granted.filter((s) => PRESET_RULES.has(s));
  // Exactly what a preset was expanded to (explicit-only scopes aside): issued as that preset.
  const listed = granted.filter((s) => !isExplicitScope(s));
  for (const earlier of EARLIER_PRESETS) {
    const same =
      listed.length === earlier.scopes.length && earlier.scopes.every((s) => scopes.has(s));
    if (same) presets.push(earlier.name);
  }
  return { scopes, presets };
});

/**
 * What a partner may give an app or a key of its own (docs/OAUTH.md, "Settings"): the
 * scopes `asked` names (presets expanded) that the tenant's `ceiling` allows, never
 * `partner:manage`; with the unknown names apart.
 */
export function grantable(
  asked: readonly string[],
  ceiling: readonly string[],
  groups: readonly string[] = OPERATION_GROUPS,
): { scopes: string[]; unknown: string[] } {
  const { scopes, unknown } = expandScopes(asked, groups);
  return {
    scopes: scopes.filter((s) => s !== PARTNER_SCOPE && hasScope(ceiling, s)),
    unknown,
  };
}
