/**
 * Settings keyed by operation id (PLATFORM_OPERATIONS, ROUTE_OVERRIDES): read with their
 * own keys as parsed, and refusing ids that are names every JavaScript object has.
 */
import * as z from 'zod';

/**
 * Names every JavaScript object has (`constructor`, `__proto__`, `toString`, ...) and
 * `prototype`: as an operation id (or a word of one) they would read an inherited value
 * wherever ids key an object, and `__proto__` would not even be kept as a key.
 */
const PROTOTYPE_NAMES = new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype']);

/** Why an id cannot be an operation id because of a prototype name, or null. */
export function prototypeNameProblem(id: string): string | null {
  const name = PROTOTYPE_NAMES.has(id) ? id : id.split('.').find((w) => PROTOTYPE_NAMES.has(w));
  return name === undefined
    ? null
    : `operation id must not be or contain ${name}: every JavaScript object has that name`;
}

/** A JSON object keyed by operation id, its own keys as parsed (z.record drops `__proto__` unseen). */
export const keyedByOperationId = z.custom<Record<string, unknown>>(
  (v) => typeof v === 'object' && v !== null && !Array.isArray(v),
  { error: 'must be a JSON object keyed by operation id' },
);
