/**
 * Fields the operator API's definitions share (admin/*.contract.ts): the ids in its
 * paths and queries, and the pieces of its answers. No Worker code: the console and
 * the CLI type-check against these files.
 */
import * as z from 'zod';

export const tenantIdField = (name: string) =>
  z.string().regex(/^ten_[0-9A-Za-z]{16}$/, `${name} must be a tenant id (ten_...)`);
export const tokenIdField = z
  .string()
  .regex(/^tok_[0-9A-Za-z]{16}$/, 'token_id must be a token id (tok_...)');
export const tenantParams = z.object({ id: tenantIdField('id') });
export const tokenParams = z.object({ id: tenantIdField('id'), token_id: tokenIdField });

/** An ISO 8601 date-time in an answer (the gateway writes UTC, `…Z`). */
export const instant = () => z.string().meta({ format: 'date-time' });

/** A whole number in an answer (a count, a status, milliseconds). */
export const int = () => z.number().int();
