/**
 * The operations one set of settings serves: the built-in table with
 * ROUTE_OVERRIDES applied, then PLATFORM_OPERATIONS. Made once per settings
 * object (settings are parsed once per isolate), never per request.
 */

import { oncePer } from '../once-per';
import type { ConfiguredOperation } from '../types/operations';
import type { Settings } from '../types/settings';
import { OPERATION_GROUPS } from './groups';
import { configureOperation } from './overrides';
import { BUILT_IN_OPERATIONS, takesIdempotencyKey } from './table';

export type CatalogSettings = Pick<Settings, 'ROUTE_OVERRIDES' | 'PLATFORM_OPERATIONS'>;

/** What a declared path matched: the operation and its decoded path parameters, or the methods it takes. */
export type DeclaredMatch =
  | { operation: ConfiguredOperation; params: Record<string, string> }
  | { allow: string[] };

export interface Catalog {
  /** Every operation, built-in ones first, as configured. */
  operations: readonly ConfiguredOperation[];
  byId: ReadonlyMap<string, ConfiguredOperation>;
  declared: readonly ConfiguredOperation[];
  /** Built-in groups, then any group only a declared operation names. */
  groups: readonly string[];
  /** The dearest single request (a browser partition never holds less). */
  largestCost: number;
  /** The operations that take an Idempotency-Key. */
  writes: readonly string[];
  /** The declared operation a method and path (Hono's, percent-decoded but `/`) reach, if any. */
  matchDeclared(method: string, path: string): DeclaredMatch | null;
}

export const catalogOf: (settings: CatalogSettings) => Catalog = oncePer(build);

function build(settings: CatalogSettings): Catalog {
  const builtIn = BUILT_IN_OPERATIONS.map((op) => configureOperation(op, settings.ROUTE_OVERRIDES));
  const declared = settings.PLATFORM_OPERATIONS.map((op) => configureOperation(op, {}));
  const operations = [...builtIn, ...declared];
  const groups: string[] = [...OPERATION_GROUPS];
  for (const op of declared) if (!groups.includes(op.group)) groups.push(op.group);
  const patterns = declared.map((operation) => ({
    operation,
    segments: operation.path.split('/').slice(1),
  }));
  return {
    operations,
    byId: new Map(operations.map((op) => [op.id, op])),
    declared,
    groups,
    largestCost: Math.max(1, ...operations.map((op) => op.cost)),
    writes: operations.filter(takesIdempotencyKey).map((op) => op.id),
    matchDeclared(method, path) {
      if (patterns.length === 0) return null;
      const parts = path.split('/').slice(1);
      const allow: string[] = [];
      for (const { operation, segments } of patterns) {
        const params = matchSegments(segments, parts);
        if (!params) continue;
        if (operation.method === method) return { operation, params };
        allow.push(operation.method);
      }
      return allow.length > 0 ? { allow } : null;
    },
  };
}

/** Path parameters when `parts` fit the pattern's segments (a placeholder takes one non-empty segment). */
function matchSegments(segments: string[], parts: string[]): Record<string, string> | null {
  if (segments.length !== parts.length) return null;
  const params: [string, string][] = [];
  for (let i = 0; i < segments.length; i++) {
    const pattern = segments[i] ?? '';
    const part = parts[i] ?? '';
    if (pattern.startsWith(':')) {
      if (part === '') return null;
      params.push([pattern.slice(1), decodeSegment(part)]);
    } else if (pattern !== part) {
      return null;
    }
  }
  // Own properties, so a `__proto__` placeholder is a parameter, not a prototype.
  return Object.fromEntries(params);
}

/** As Hono decodes a path parameter: `%2F` and friends too; a malformed escape stays as sent. */
function decodeSegment(part: string): string {
  if (!part.includes('%')) return part;
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}
